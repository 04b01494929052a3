//! Table tests. Rows come from AWS's filter-policy pages and recorded AWS
//! answers (spec §8) where there is one; the rest pin Retsu's choices.

use super::*;

use Scope::{MessageAttributes as A, MessageBody as B};

/// A message: attributes as (name, type, value), or a body.
enum Msg {
    Attrs(&'static [(&'static str, &'static str, &'static str)]),
    Body(&'static str),
}
use Msg::{Attrs, Body};

/// (what, policy, scope, message, delivered)
type Row = (&'static str, &'static str, Scope, Msg, bool);

fn deliver(policy: &FilterPolicy, msg: &Msg) -> Result<(), Mismatch> {
    match msg {
        Attrs(list) => {
            let list: Vec<(&str, Attribute<'_>)> = list
                .iter()
                .map(|(n, t, v)| {
                    (
                        *n,
                        Attribute {
                            data_type: t,
                            value: v,
                        },
                    )
                })
                .collect();
            policy.match_attribute_list(&list)
        }
        Body(body) => policy.match_body(body),
    }
}

const S: &str = "String";
const N: &str = "Number";
const SA: &str = "String.Array";

#[rustfmt::skip]
const MATCH_ROWS: &[Row] = &[
    // Exact strings, OR within a key, AND across keys [D and-or-logic].
    ("exact string", r#"{"customer_interests":["rugby","tennis"]}"#, A, Attrs(&[("customer_interests", S, "rugby")]), true),
    ("exact string, other value", r#"{"customer_interests":["rugby","tennis"]}"#, A, Attrs(&[("customer_interests", S, "baseball")]), false),
    ("exact string is case-sensitive", r#"{"k":["Rugby"]}"#, A, Attrs(&[("k", S, "rugby")]), false),
    ("missing attribute", r#"{"color":["red"]}"#, A, Attrs(&[("size", S, "big")]), false),
    ("keys not in the policy are ignored", r#"{"color":["red"]}"#, A, Attrs(&[("color", S, "red"), ("size", S, "big")]), true),
    ("AND: both keys", r#"{"customer_interests":["rugby"],"price_usd":[{"numeric":[">",100]}]}"#, A, Attrs(&[("customer_interests", S, "rugby"), ("price_usd", N, "101")]), true),
    ("AND: one key fails", r#"{"customer_interests":["rugby"],"price_usd":[{"numeric":[">",100]}]}"#, A, Attrs(&[("customer_interests", S, "rugby"), ("price_usd", N, "100")]), false),
    ("custom type suffix", r#"{"k":["v"]}"#, A, Attrs(&[("k", "String.custom", "v")]), true),
    ("Binary is ignored", r#"{"k":[{"exists":true}]}"#, A, Attrs(&[("k", "Binary", "dg==")]), false),
    ("Binary counts as absent for exists false", r#"{"k":[{"exists":false}]}"#, A, Attrs(&[("k", "Binary", "dg==")]), true),
    // String.Array: any element [R].
    ("String.Array any element", r#"{"k":["value1"]}"#, A, Attrs(&[("k", SA, r#"["value1","value2"]"#)]), true),
    ("String.Array no element", r#"{"k":["value1"]}"#, A, Attrs(&[("k", SA, r#"["value2","value3"]"#)]), false),
    ("String.Array numbers", r#"{"k":[{"numeric":[">",10]}]}"#, A, Attrs(&[("k", SA, "[1, 20]")]), true),
    ("String.Array empty is not exists", r#"{"k":[{"exists":true}]}"#, A, Attrs(&[("k", SA, "[]")]), false),
    // Numbers [D numeric-value-matching][R].
    ("exact number, exponent form", r#"{"price":[301.5]}"#, A, Attrs(&[("price", N, "3.015e2")]), true),
    ("numeric = exponent", r#"{"price":[{"numeric":["=",3.015e2]}]}"#, A, Attrs(&[("price", N, "301.5")]), true),
    ("numeric = other", r#"{"price":[{"numeric":["=",301.5]}]}"#, A, Attrs(&[("price", N, "301.6")]), false),
    ("numeric five decimals", r#"{"price":[{"numeric":["=",1]}]}"#, A, Attrs(&[("price", N, "1.000001")]), true),
    ("numeric fifth decimal counts", r#"{"price":[{"numeric":["=",1]}]}"#, A, Attrs(&[("price", N, "1.00001")]), false),
    ("range in", r#"{"k":[{"numeric":[">",0,"<=",100]}]}"#, A, Attrs(&[("k", N, "99")]), true),
    ("range top inclusive", r#"{"k":[{"numeric":[">",0,"<=",100]}]}"#, A, Attrs(&[("k", N, "100")]), true),
    ("range out", r#"{"k":[{"numeric":[">",0,"<=",100]}]}"#, A, Attrs(&[("k", N, "111")]), false),
    ("range bottom exclusive", r#"{"k":[{"numeric":[">",0,"<=",100]}]}"#, A, Attrs(&[("k", N, "0")]), false),
    ("less than", r#"{"k":[{"numeric":["<",0]}]}"#, A, Attrs(&[("k", N, "-1e9")]), true),
    (">= inclusive", r#"{"k":[{"numeric":[">=",5]}]}"#, A, Attrs(&[("k", N, "5")]), true),
    ("< exclusive", r#"{"k":[{"numeric":["<",5]}]}"#, A, Attrs(&[("k", N, "5")]), false),
    ("numeric string is not a Number", r#"{"k":[{"numeric":[">",0]}]}"#, A, Attrs(&[("k", S, "99")]), false),
    ("Number is not an exact string", r#"{"k":["99"]}"#, A, Attrs(&[("k", N, "99")]), false),
    ("Number custom type", r#"{"k":[99]}"#, A, Attrs(&[("k", "Number.int", "99.0")]), true),
    // Prefix, suffix, equals-ignore-case, wildcard [D string-value-matching].
    ("prefix", r#"{"k":[{"prefix":"bas"}]}"#, A, Attrs(&[("k", S, "basketball")]), true),
    ("prefix no", r#"{"k":[{"prefix":"bas"}]}"#, A, Attrs(&[("k", S, "rugby")]), false),
    ("suffix", r#"{"k":[{"suffix":"ball"}]}"#, A, Attrs(&[("k", S, "baseball")]), true),
    ("suffix no", r#"{"k":[{"suffix":"ball"}]}"#, A, Attrs(&[("k", S, "rugby")]), false),
    ("equals-ignore-case", r#"{"k":[{"equals-ignore-case":"RuGbY"}]}"#, A, Attrs(&[("k", S, "rugby")]), true),
    ("equals-ignore-case no", r#"{"k":[{"equals-ignore-case":"rugby"}]}"#, A, Attrs(&[("k", S, "rugby2")]), false),
    ("wildcard", r#"{"k":[{"wildcard":"*.example.*"}]}"#, A, Attrs(&[("k", S, "www.example.com")]), true),
    ("wildcard no", r#"{"k":[{"wildcard":"*.example.*"}]}"#, A, Attrs(&[("k", S, "example.com")]), false),
    ("wildcard escaped star", r#"{"k":[{"wildcard":"a\\*b"}]}"#, A, Attrs(&[("k", S, "a*b")]), true),
    // anything-but [D][R].
    ("anything-but list", r#"{"k":[{"anything-but":["rugby","tennis"]}]}"#, A, Attrs(&[("k", S, "baseball")]), true),
    ("anything-but list hit", r#"{"k":[{"anything-but":["rugby","tennis"]}]}"#, A, Attrs(&[("k", S, "tennis")]), false),
    ("anything-but String.Array with an outside element", r#"{"k":[{"anything-but":["rugby","tennis"]}]}"#, A, Attrs(&[("k", SA, r#"["rugby","baseball"]"#)]), true),
    ("anything-but String.Array all listed", r#"{"k":[{"anything-but":["rugby","tennis"]}]}"#, A, Attrs(&[("k", SA, r#"["rugby","tennis"]"#)]), false),
    ("anything-but single", r#"{"k":[{"anything-but":"x"}]}"#, A, Attrs(&[("k", S, "y")]), true),
    ("anything-but missing", r#"{"k":[{"anything-but":"x"}]}"#, A, Attrs(&[("other", S, "y")]), false),
    ("null or anything-but, key absent [R]", r#"{"k":[null,{"anything-but":"x"}]}"#, A, Attrs(&[("other", S, "y")]), false),
    ("anything-but numbers", r#"{"k":[{"anything-but":[100,200]}]}"#, A, Attrs(&[("k", N, "150")]), true),
    ("anything-but numbers hit", r#"{"k":[{"anything-but":[100,200]}]}"#, A, Attrs(&[("k", N, "1e2")]), false),
    ("anything-but number, string value", r#"{"k":[{"anything-but":100}]}"#, A, Attrs(&[("k", S, "150")]), false),
    ("anything-but prefix", r#"{"k":[{"anything-but":{"prefix":"order-"}}]}"#, A, Attrs(&[("k", S, "invoice-1")]), true),
    ("anything-but prefix hit", r#"{"k":[{"anything-but":{"prefix":"order-"}}]}"#, A, Attrs(&[("k", S, "order-1")]), false),
    ("anything-but suffix", r#"{"k":[{"anything-but":{"suffix":".txt"}}]}"#, A, Attrs(&[("k", S, "a.png")]), true),
    ("anything-but suffix hit", r#"{"k":[{"anything-but":{"suffix":".txt"}}]}"#, A, Attrs(&[("k", S, "a.txt")]), false),
    ("anything-but wildcard", r#"{"k":[{"anything-but":{"wildcard":"*/test/*"}}]}"#, A, Attrs(&[("k", S, "/a/test/b")]), false),
    ("anything-but or exists false, absent", r#"{"k":[{"anything-but":"x"},{"exists":false}]}"#, A, Attrs(&[("other", S, "y")]), true),
    // exists [D attribute-key-matching].
    ("exists true", r#"{"store":[{"exists":true}]}"#, A, Attrs(&[("store", S, "fans")]), true),
    ("exists true, absent", r#"{"store":[{"exists":true}]}"#, A, Attrs(&[("other", S, "x")]), false),
    ("exists false, absent", r#"{"store":[{"exists":false}]}"#, A, Attrs(&[("other", S, "x")]), true),
    ("exists false, present", r#"{"store":[{"exists":false}]}"#, A, Attrs(&[("store", S, "fans")]), false),
    ("exists false, no attributes at all", r#"{"store":[{"exists":false}]}"#, A, Attrs(&[]), false),
    // cidr [R].
    ("cidr v4 in", r#"{"ip":[{"cidr":"10.0.0.0/24"}]}"#, A, Attrs(&[("ip", S, "10.0.0.255")]), true),
    ("cidr v4 not an address", r#"{"ip":[{"cidr":"10.0.0.0/24"}]}"#, A, Attrs(&[("ip", S, "10.0.0.256")]), false),
    ("cidr v4 out", r#"{"ip":[{"cidr":"10.0.0.0/24"}]}"#, A, Attrs(&[("ip", S, "10.0.1.0")]), false),
    ("cidr v6 in", r#"{"ip":[{"cidr":"2001:db8:1234:1a00::/64"}]}"#, A, Attrs(&[("ip", S, "2001:0db8:1234:1a00::")]), true),
    ("cidr v6 out", r#"{"ip":[{"cidr":"2001:db8:1234:1a00::/64"}]}"#, A, Attrs(&[("ip", S, "2001:db8:1234:1a01::1")]), false),
    ("cidr v6 network, v4 value", r#"{"ip":[{"cidr":"::/0"}]}"#, A, Attrs(&[("ip", S, "10.0.0.1")]), false),
    // $or [D and-or-logic].
    ("$or first branch", r#"{"source":["aws.cloudwatch"],"$or":[{"metricName":["CPUUtilization"]},{"namespace":["AWS/EC2"]}]}"#, A, Attrs(&[("source", S, "aws.cloudwatch"), ("metricName", S, "CPUUtilization")]), true),
    ("$or second branch", r#"{"source":["aws.cloudwatch"],"$or":[{"metricName":["CPUUtilization"]},{"namespace":["AWS/EC2"]}]}"#, A, Attrs(&[("source", S, "aws.cloudwatch"), ("namespace", S, "AWS/EC2")]), true),
    ("$or no branch", r#"{"source":["aws.cloudwatch"],"$or":[{"metricName":["CPUUtilization"]},{"namespace":["AWS/EC2"]}]}"#, A, Attrs(&[("source", S, "aws.cloudwatch"), ("namespace", S, "AWS/S3")]), false),
    ("$or sibling fails", r#"{"source":["aws.cloudwatch"],"$or":[{"metricName":["CPUUtilization"]},{"namespace":["AWS/EC2"]}]}"#, A, Attrs(&[("source", S, "aws.s3"), ("namespace", S, "AWS/EC2")]), false),
    ("$or with one object is a key", r#"{"$or":[{"prefix":"a"}]}"#, A, Attrs(&[("$or", S, "abc")]), true),
    ("$or with reserved words is a key", r#"{"$or":[{"numeric":["=",123]},{"prefix":"abc"}]}"#, A, Attrs(&[("$or", S, "abcd")]), true),
    // Body scope [R][D].
    ("body exact", r#"{"customer_interests":["rugby"]}"#, B, Body(r#"{"customer_interests":"rugby"}"#), true),
    ("body array any element", r#"{"customer_interests":["rugby"]}"#, B, Body(r#"{"customer_interests":["baseball","rugby"]}"#), true),
    ("body array no element", r#"{"customer_interests":["rugby"]}"#, B, Body(r#"{"customer_interests":["baseball"]}"#), false),
    ("body number exact", r#"{"price":[301.5]}"#, B, Body(r#"{"price":3.015e2}"#), true),
    ("body number is not the string", r#"{"price":["301.5"]}"#, B, Body(r#"{"price":301.5}"#), false),
    ("body null", r#"{"k":[null]}"#, B, Body(r#"{"k":null}"#), true),
    ("body null, absent", r#"{"k":[null]}"#, B, Body(r#"{"j":null}"#), false),
    ("body bool", r#"{"k":[true]}"#, B, Body(r#"{"k":true}"#), true),
    ("body nested", r#"{"a":{"b":{"c":["x"]}}}"#, B, Body(r#"{"a":{"b":{"c":"x"}}}"#), true),
    ("body nested, other value", r#"{"a":{"b":{"c":["x"]}}}"#, B, Body(r#"{"a":{"b":{"c":"y"}}}"#), false),
    ("body nested wrong level", r#"{"a":{"b":["x"]}}"#, B, Body(r#"{"b":"x"}"#), false),
    ("dotted policy, nested body", r#"{"object.nested":["v"]}"#, B, Body(r#"{"object":{"nested":"v"}}"#), true),
    ("dotted policy, dotted body", r#"{"object.nested":["v"]}"#, B, Body(r#"{"object.nested":"v"}"#), true),
    ("dotted mixed a.b / c", r#"{"a.b.c":["v"]}"#, B, Body(r#"{"a.b":{"c":"v"}}"#), true),
    ("dotted mixed a / b.c", r#"{"a.b.c":["v"]}"#, B, Body(r#"{"a":{"b.c":"v"}}"#), true),
    ("nested policy, dotted body", r#"{"a":{"b":["v"]}}"#, B, Body(r#"{"a.b":"v"}"#), true),
    ("array of objects", r#"{"Records":{"s3":{"object":{"key":[{"prefix":"img/"}]}}}}"#, B, Body(r#"{"Records":[{"s3":{"object":{"key":"doc/a"}}},{"s3":{"object":{"key":"img/b"}}}]}"#), true),
    ("array of arrays of objects", r#"{"object":{"key":["k2"]}}"#, B, Body(r#"{"object":[[{"key":"k1"}],[{"key":"k2"}]]}"#), true),
    ("empty payload array is harmless", r#"{"a":["x"]}"#, B, Body(r#"{"a":"x","b":[]}"#), true),
    ("empty payload array is absent", r#"{"a":[{"exists":false}]}"#, B, Body(r#"{"a":[]}"#), true),
    ("object is not a leaf for exists", r#"{"a":[{"exists":true}]}"#, B, Body(r#"{"a":{"b":1}}"#), false),
    ("body exists false, empty object body", r#"{"a":[{"exists":false}]}"#, B, Body("{}"), true),
    ("body not JSON", r#"{"a":["x"]}"#, B, Body("a=x"), false),
    ("body JSON string", r#"{"a":["x"]}"#, B, Body(r#""text""#), false),
    ("body numeric range", r#"{"p":[{"numeric":[">=",10,"<",20]}]}"#, B, Body(r#"{"p":[5,15]}"#), true),
    ("body cidr", r#"{"ip":[{"cidr":"192.168.0.0/16"}]}"#, B, Body(r#"{"ip":"192.168.3.4"}"#), true),
    ("body $or nested", r#"{"detail":{"scope":["Service"],"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm"]}]}}"#, B, Body(r#"{"detail":{"scope":"Service","type":"CloudWatch Alarm"}}"#), true),
    ("body $or nested, no branch", r#"{"detail":{"scope":["Service"],"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm"]}]}}"#, B, Body(r#"{"detail":{"scope":"Service","type":"Other"}}"#), false),
    // An absent key matches only `exists: false` [D attribute-key-matching,
    // string-value-matching: "anything-but can be combined with exists:
    // false"]; every other operator needs the key. Attribute scope, the
    // message carrying another attribute (so exists: false may match).
    ("absent: exact string", r#"{"k":["x"]}"#, A, Attrs(&[("other", S, "y")]), false),
    ("absent: exact number", r#"{"k":[5]}"#, A, Attrs(&[("other", N, "5")]), false),
    ("absent: numeric =", r#"{"k":[{"numeric":["=",5]}]}"#, A, Attrs(&[("other", N, "5")]), false),
    ("absent: numeric range over every value", r#"{"k":[{"numeric":[">=",-1000000000,"<=",1000000000]}]}"#, A, Attrs(&[("other", N, "5")]), false),
    ("absent: prefix", r#"{"k":[{"prefix":"x"}]}"#, A, Attrs(&[("other", S, "xy")]), false),
    ("absent: suffix", r#"{"k":[{"suffix":"y"}]}"#, A, Attrs(&[("other", S, "xy")]), false),
    ("absent: equals-ignore-case", r#"{"k":[{"equals-ignore-case":"XY"}]}"#, A, Attrs(&[("other", S, "xy")]), false),
    ("absent: wildcard *", r#"{"k":[{"wildcard":"*"}]}"#, A, Attrs(&[("other", S, "xy")]), false),
    ("absent: anything-but list", r#"{"k":[{"anything-but":["a","b"]}]}"#, A, Attrs(&[("other", S, "y")]), false),
    ("absent: anything-but numbers", r#"{"k":[{"anything-but":[100,200]}]}"#, A, Attrs(&[("other", N, "5")]), false),
    ("absent: anything-but number", r#"{"k":[{"anything-but":100}]}"#, A, Attrs(&[("other", N, "5")]), false),
    ("absent: anything-but prefix", r#"{"k":[{"anything-but":{"prefix":"x"}}]}"#, A, Attrs(&[("other", S, "y")]), false),
    ("absent: anything-but suffix", r#"{"k":[{"anything-but":{"suffix":"x"}}]}"#, A, Attrs(&[("other", S, "y")]), false),
    ("absent: anything-but wildcard", r#"{"k":[{"anything-but":{"wildcard":"x*"}}]}"#, A, Attrs(&[("other", S, "y")]), false),
    ("absent: null", r#"{"k":[null]}"#, A, Attrs(&[("other", S, "y")]), false),
    ("absent: cidr over every address", r#"{"k":[{"cidr":"0.0.0.0/0"}]}"#, A, Attrs(&[("other", S, "10.0.0.1")]), false),
    ("absent: every operator but exists false", r#"{"k":["x",5,null,{"prefix":"x"},{"anything-but":"x"},{"anything-but":[1]},{"numeric":[">",0]},{"exists":true}]}"#, A, Attrs(&[("other", S, "y")]), false),
    ("absent: every operator and exists false", r#"{"k":["x",5,null,{"prefix":"x"},{"anything-but":"x"},{"anything-but":[1]},{"numeric":[">",0]},{"exists":false}]}"#, A, Attrs(&[("other", S, "y")]), true),
    ("absent: Binary is absent for anything-but", r#"{"k":[{"anything-but":"x"}]}"#, A, Attrs(&[("k", "Binary", "dg==")]), false),
    ("absent: anything-but or exists false, excluded value", r#"{"k":[{"anything-but":"x"},{"exists":false}]}"#, A, Attrs(&[("k", S, "x")]), false),
    // The reported case, as AWS recorded it: Publish with no attributes at
    // all [R] (LocalStack's AWS-validated test_filter_policy).
    ("null or anything-but, no attributes at all [R]", r#"{"attr1":[null,{"anything-but":"whatever"}]}"#, A, Attrs(&[]), false),
    ("null or anything-but, other value", r#"{"attr1":[null,{"anything-but":"whatever"}]}"#, A, Attrs(&[("attr1", S, "x")]), true),
    ("null or anything-but, excluded value", r#"{"attr1":[null,{"anything-but":"whatever"}]}"#, A, Attrs(&[("attr1", S, "whatever")]), false),
    // $or groups over absent keys: a branch holds only as its leaves do.
    ("absent: $or, absent in every branch", r#"{"$or":[{"a":[{"anything-but":"x"}]},{"b":[null]}]}"#, A, Attrs(&[("c", S, "y")]), false),
    ("absent: $or, exists false branch", r#"{"$or":[{"a":["x"]},{"b":[{"exists":false}]}]}"#, A, Attrs(&[("c", S, "y")]), true),
    ("absent: $or, exists false branch, no attributes at all", r#"{"$or":[{"a":["x"]},{"b":[{"exists":false}]}]}"#, A, Attrs(&[]), false),
    ("absent: $or, exists false branch, key present", r#"{"$or":[{"a":["x"]},{"b":[{"exists":false}]}]}"#, A, Attrs(&[("b", S, "y")]), false),
    ("absent: $or holds, sibling key absent", r#"{"s":[{"anything-but":"x"}],"$or":[{"a":["1"]},{"b":["2"]}]}"#, A, Attrs(&[("a", S, "1")]), false),
    // The same in body scope, the body carrying another key.
    ("absent body: exact string", r#"{"k":["x"]}"#, B, Body(r#"{"other":"x"}"#), false),
    ("absent body: exact number", r#"{"k":[5]}"#, B, Body(r#"{"other":5}"#), false),
    ("absent body: true", r#"{"k":[true]}"#, B, Body(r#"{"other":true}"#), false),
    ("absent body: false", r#"{"k":[false]}"#, B, Body(r#"{"other":false}"#), false),
    ("absent body: numeric =", r#"{"k":[{"numeric":["=",5]}]}"#, B, Body(r#"{"other":5}"#), false),
    ("absent body: numeric range over every value", r#"{"k":[{"numeric":[">=",-1000000000,"<=",1000000000]}]}"#, B, Body(r#"{"other":5}"#), false),
    ("absent body: prefix", r#"{"k":[{"prefix":"x"}]}"#, B, Body(r#"{"other":"xy"}"#), false),
    ("absent body: suffix", r#"{"k":[{"suffix":"y"}]}"#, B, Body(r#"{"other":"xy"}"#), false),
    ("absent body: equals-ignore-case", r#"{"k":[{"equals-ignore-case":"XY"}]}"#, B, Body(r#"{"other":"xy"}"#), false),
    ("absent body: wildcard *", r#"{"k":[{"wildcard":"*"}]}"#, B, Body(r#"{"other":"xy"}"#), false),
    ("absent body: anything-but string", r#"{"k":[{"anything-but":"x"}]}"#, B, Body(r#"{"other":"y"}"#), false),
    ("absent body: anything-but list", r#"{"k":[{"anything-but":["a","b"]}]}"#, B, Body(r#"{"other":"y"}"#), false),
    ("absent body: anything-but numbers", r#"{"k":[{"anything-but":[100,200]}]}"#, B, Body(r#"{"other":5}"#), false),
    ("absent body: anything-but number", r#"{"k":[{"anything-but":100}]}"#, B, Body(r#"{"other":5}"#), false),
    ("absent body: anything-but prefix", r#"{"k":[{"anything-but":{"prefix":"x"}}]}"#, B, Body(r#"{"other":"y"}"#), false),
    ("absent body: anything-but suffix", r#"{"k":[{"anything-but":{"suffix":"x"}}]}"#, B, Body(r#"{"other":"y"}"#), false),
    ("absent body: anything-but wildcard", r#"{"k":[{"anything-but":{"wildcard":"x*"}}]}"#, B, Body(r#"{"other":"y"}"#), false),
    ("absent body: null", r#"{"k":[null]}"#, B, Body(r#"{"other":"y"}"#), false),
    ("absent body: cidr over every address", r#"{"k":[{"cidr":"0.0.0.0/0"}]}"#, B, Body(r#"{"other":"10.0.0.1"}"#), false),
    ("absent body: exists true", r#"{"k":[{"exists":true}]}"#, B, Body(r#"{"other":"y"}"#), false),
    ("absent body: exists false", r#"{"k":[{"exists":false}]}"#, B, Body(r#"{"other":"y"}"#), true),
    ("absent body: every operator but exists false", r#"{"k":["x",5,true,null,{"prefix":"x"},{"anything-but":"x"},{"anything-but":[1]},{"numeric":[">",0]},{"exists":true}]}"#, B, Body(r#"{"other":"y"}"#), false),
    ("absent body: every operator and exists false", r#"{"k":["x",5,true,null,{"prefix":"x"},{"anything-but":"x"},{"anything-but":[1]},{"numeric":[">",0]},{"exists":false}]}"#, B, Body(r#"{"other":"y"}"#), true),
    ("absent body: anything-but or exists false", r#"{"k":[{"anything-but":"x"},{"exists":false}]}"#, B, Body(r#"{"other":"y"}"#), true),
    ("absent body: nested key", r#"{"a":{"b":[{"anything-but":"x"}]}}"#, B, Body(r#"{"a":{"c":"y"}}"#), false),
    ("absent body: nested key under a scalar", r#"{"a":{"b":[{"anything-but":"x"}]}}"#, B, Body(r#"{"a":"y"}"#), false),
    ("absent body: nested key, exists false", r#"{"a":{"b":[{"exists":false}]}}"#, B, Body(r#"{"a":{"c":"y"}}"#), true),
    ("absent body: [] has no value for anything-but", r#"{"k":[{"anything-but":"x"}]}"#, B, Body(r#"{"k":[]}"#), false),
    ("absent body: [] has no null", r#"{"k":[null]}"#, B, Body(r#"{"k":[]}"#), false),
    // An object is not a leaf: the key has no value there [D: exists works
    // on leaf nodes only]; that exists: false then matches is our reading.
    ("absent body: object for anything-but", r#"{"k":[{"anything-but":"x"}]}"#, B, Body(r#"{"k":{"a":"y"}}"#), false),
    ("absent body: object, exists false", r#"{"k":[{"exists":false}]}"#, B, Body(r#"{"k":{"a":"y"}}"#), true),
    ("absent body: not an object, exists false", r#"{"k":[{"exists":false}]}"#, B, Body("[]"), false),
    // A JSON null is a present key with a null value: it matches `null`
    // and nothing else, and exists: true wants a non-null value [D].
    ("null or anything-but, body without the key", r#"{"attr1":[null,{"anything-but":"whatever"}]}"#, B, Body(r#"{"other":"y"}"#), false),
    ("null or anything-but, empty body", r#"{"attr1":[null,{"anything-but":"whatever"}]}"#, B, Body("{}"), false),
    ("null or anything-but, body null", r#"{"attr1":[null,{"anything-but":"whatever"}]}"#, B, Body(r#"{"attr1":null}"#), true),
    ("null or anything-but, body other value", r#"{"attr1":[null,{"anything-but":"whatever"}]}"#, B, Body(r#"{"attr1":"x"}"#), true),
    ("null or anything-but, body excluded value", r#"{"attr1":[null,{"anything-but":"whatever"}]}"#, B, Body(r#"{"attr1":"whatever"}"#), false),
    ("body null is not anything-but", r#"{"k":[{"anything-but":"x"}]}"#, B, Body(r#"{"k":null}"#), false),
    ("body null is not exists true", r#"{"k":[{"exists":true}]}"#, B, Body(r#"{"k":null}"#), false),
    ("body null is present for exists false", r#"{"k":[{"exists":false}]}"#, B, Body(r#"{"k":null}"#), false),
    ("absent body: $or, absent in every branch", r#"{"$or":[{"a":[null]},{"b":[{"anything-but":"x"}]}]}"#, B, Body(r#"{"c":1}"#), false),
    ("absent body: $or, null branch present", r#"{"$or":[{"a":[null]},{"b":[{"anything-but":"x"}]}]}"#, B, Body(r#"{"a":null}"#), true),
    ("absent body: $or, exists false branch", r#"{"$or":[{"a":["x"]},{"b":[{"exists":false}]}]}"#, B, Body(r#"{"c":1}"#), true),
    ("absent body: $or, exists false branch, key present", r#"{"$or":[{"a":["x"]},{"b":[{"exists":false}]}]}"#, B, Body(r#"{"b":1}"#), false),
    ("empty policy delivers non-JSON", "{}", B, Body("plain"), true),
    ("\"\" policy delivers", "", A, Attrs(&[]), true),
];

#[test]
fn match_table() {
    let mut failures = Vec::new();
    for (what, policy, scope, msg, expected) in MATCH_ROWS {
        let compiled = match FilterPolicy::parse(policy, *scope) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{what}: policy rejected: {e}"));
                continue;
            }
        };
        let got = deliver(&compiled, msg);
        if got.is_ok() != *expected {
            failures.push(format!(
                "{what}: expected delivered={expected}, got {got:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `$or` at the top and inside a nested object, the shape AWS recorded,
/// over every combination of 12 messages.
#[test]
fn or_at_two_levels() {
    let policy = FilterPolicy::parse(
        r#"{"$or":[{"metricName":["CPUUtilization"]},{"namespace":["AWS/EC2"]}],
            "detail":{"scope":["Service"],"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm"]}]}}"#,
        B,
    )
    .unwrap();
    let mut delivered = 0;
    for metric in ["CPUUtilization", "Other", ""] {
        for namespace in ["AWS/EC2", "Other"] {
            for (source, kind) in [("aws.cloudwatch", "x"), ("other", "x")] {
                let body = serde_json::json!({
                    "metricName": metric, "namespace": namespace,
                    "detail": {"scope": "Service", "source": source, "type": kind},
                })
                .to_string();
                delivered += usize::from(policy.match_body(&body).is_ok());
            }
        }
    }
    // The first $or holds for 4 of the 6 (metric, namespace) pairs, the
    // nested one for half of the (source, type) pairs: 4 of 12.
    assert_eq!(delivered, 4);
}

/// (policy, scope, the text after the prefix)
#[rustfmt::skip]
const ERROR_ROWS: &[(&str, Scope, &str)] = &[
    (r#"{"key":[["value"]]}"#, A, "Match value must be String, number, true, false, or null"),
    (r#"{"key":[{"wrong-operator":true}]}"#, A, "Unrecognized match type wrong-operator"),
    (r#"{"key":[{"suffix":"v","prefix":"w"}]}"#, A, "Only one key allowed in match expression"),
    (r#"{"key":[]}"#, A, "Empty arrays are not allowed"),
    (r#"{"key":[{"suffix":100}]}"#, A, "suffix match pattern must be a string"),
    (r#"{"key":[{"suffix":null}]}"#, A, "suffix match pattern must be a string"),
    (r#"{"key":[{"suffix":[]}]}"#, A, "suffix match pattern must be a string"),
    (r#"{"key":[{"suffix":["a","b"]}]}"#, A, "suffix match pattern must be a string"),
    (r#"{"key":[{"prefix":100}]}"#, A, "prefix match pattern must be a string"),
    (r#"{"key":{"suffix":"value"}}"#, B, "\"suffix\" must be an object or an array"),
    (r#"{"key_a":"value_one"}"#, A, "\"key_a\" must be an object or an array"),
    (r#"{"key":[{"cidr":["bad"]}]}"#, A, "prefix match pattern must be a string"),
    (r#"{"key":[{"cidr":"bad-filter"}]}"#, A, "Malformed CIDR, one '/' required"),
    (r#"{"key":[{"cidr":"bad-filter/64"}]}"#, A, "Nonstandard IP address: bad-filter"),
    (r#"{"key":[{"cidr":"bad-/64filter"}]}"#, A, "Malformed CIDR, mask bits must be an integer"),
    (r#"{"key":[{"numeric":[]}]}"#, A, "Invalid member in numeric match: ]"),
    (r#"{"key":[{"numeric":["operator"]}]}"#, A, "Unrecognized numeric range operator: operator"),
    (r#"{"key":[{"numeric":[1,"<="]}]}"#, A, "Invalid member in numeric match: 1"),
    (r#"{"key":[{"numeric":["=","000"]}]}"#, A, "Value of equals must be numeric"),
    (r#"{"key":[{"numeric":[">="]}]}"#, A, "Value of >= must be numeric"),
    (r#"{"key":[{"numeric":["<",100,">",10]}]}"#, A, "Too many elements in numeric expression"),
    (r#"{"key":[{"numeric":[">=",1,">",2]}]}"#, A, "Bad numeric range operator: >"),
    (r#"{"key":[{"numeric":[">",3,"<",1]}]}"#, A, "Bottom must be less than top"),
    (r#"{"key":[{"numeric":[">",20,"<="]}]}"#, A, "Value of <= must be numeric"),
    (r#"{"key":[{"numeric":[">",20,30]}]}"#, A, "Bad value in numeric range: 30"),
    (r#"{"key":[{"numeric":[">",20,"test"]}]}"#, A, "Bad numeric range operator: test"),
    (r#"{"key":[{"numeric":[">","20","<","30"]}]}"#, A, "Value of > must be numeric"),
    (r#"{"key":[{"numeric":[">",20,"<",30,"<",50]}]}"#, A, "Too many terms in numeric range expression"),
    (r#"{"key":[{"exists":null}]}"#, A, "exists match pattern must be either true or false."),
    (r#"{"key":[{"exists":"no"}]}"#, A, "exists match pattern must be either true or false."),
    (r#"{"key":[{"anything-but":{"wrong-operator":null}}]}"#, A, "Unsupported anything-but pattern: wrong-operator"),
    (r#"{"key":[{"anything-but":{"exists":false}}]}"#, A, "Unsupported anything-but pattern: exists"),
    (r#"{"key":[{"anything-but":{"prefix":false}}]}"#, A, "prefix match pattern must be a string"),
    (r#"{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}"#, A, "Filter policy can not have more than 5 keys"),
    (r#"{"a":["1"],"b":["1"],"c":["1"],"$or":[{"d":["1"],"e":["1"],"f":["1"]},{"g":["1"]}]}"#, A, "Filter policy can not have more than 5 keys"),
    (r#"{"key":["1",#]}"#, A, "failed to parse JSON. "),
];

#[test]
fn error_table() {
    let mut failures = Vec::new();
    for (policy, scope, expected) in ERROR_ROWS {
        match FilterPolicy::parse(policy, *scope) {
            Ok(_) => failures.push(format!("{policy}: accepted, expected {expected:?}")),
            Err(e) => {
                // JSON errors carry the parser's detail after AWS's words.
                let same = if expected.starts_with("failed to parse JSON.") {
                    e.message().starts_with(expected)
                } else {
                    e.message() == *expected
                };
                if !same || e.nested_scope_error() {
                    failures.push(format!(
                        "{policy}: got {:?}, expected {expected:?}",
                        e.message()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn nested_policy_in_attribute_scope() {
    let e = FilterPolicy::parse(r#"{"a":{"b":["x"]}}"#, A).unwrap_err();
    assert!(e.nested_scope_error());
    assert_eq!(
        e.message(),
        "Filter policy scope MessageAttributes does not support nested filter policy"
    );
    assert_eq!(
        e.wire_message(false),
        "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"
    );
    assert!(FilterPolicy::parse(r#"{"a":{"b":["x"]}}"#, B).is_ok());
}

#[test]
fn wire_prefixes() {
    let e =
        FilterPolicy::parse(r#"{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1],"f":[1]}"#, B).unwrap_err();
    assert_eq!(
        e.wire_message(true),
        "Invalid parameter: Attributes Reason: FilterPolicy: Filter policy can not have more than 5 keys"
    );
    assert_eq!(
        e.wire_message(false),
        "Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys"
    );
}

fn values(n: usize) -> String {
    let v: Vec<String> = (0..n).map(|i| format!("\"v{i}\"")).collect();
    format!("[{}]", v.join(","))
}

#[test]
fn complexity_examples() {
    // 3 × 4 × 2 × 3 = 72: accepted [D].
    let nested = format!(
        r#"{{"key_a":{{"key_b":{{"key_c":{}}}}},"key_d":{{"key_e":{}}}}}"#,
        values(4),
        values(3)
    );
    assert!(FilterPolicy::parse(&nested, B).is_ok(), "72 must pass");
    // With "key_f": 3 values, 72 × 3 = 216: rejected [R].
    let more = format!(
        r#"{{"key_a":{{"key_b":{{"key_c":{}}}}},"key_d":{{"key_e":{}}},"key_f":{}}}"#,
        values(4),
        values(3),
        values(3)
    );
    let too_complex = |p: &str, scope| {
        FilterPolicy::parse(p, scope)
            .map(|_| ())
            .map_err(|e| e.message().to_string())
    };
    assert_eq!(
        too_complex(&more, B),
        Err("Filter policy is too complex".into())
    );
    // 4 × (6 + 4 × (4 + 4)) = 152: rejected [R].
    let or = format!(
        r#"{{"source":{},"$or":[{{"metricName":{}}},{{"metricType":{},"$or":[{{"metricId":{}}},{{"spaceId":{}}}]}}]}}"#,
        values(4),
        values(6),
        values(4),
        values(4),
        values(4)
    );
    assert_eq!(
        too_complex(&or, A),
        Err("Filter policy is too complex".into())
    );
    // One value less in metricName: 4 × (5 + 32) = 148 passes.
    let or_ok = or.replacen(&values(6), &values(5), 1);
    assert_eq!(too_complex(&or_ok, A), Ok(()));
    // 151 values in one key, and 100 × 51 [R]; 150 values pass.
    assert_eq!(
        too_complex(&format!(r#"{{"key":{}}}"#, values(151)), A),
        Err("Filter policy is too complex".into())
    );
    assert_eq!(
        too_complex(&format!(r#"{{"key":{}}}"#, values(150)), A),
        Ok(())
    );
    assert_eq!(
        too_complex(
            &format!(r#"{{"key1":{},"key2":{}}}"#, values(100), values(51)),
            A
        ),
        Err("Filter policy is too complex".into())
    );
}

#[test]
fn limits_and_accepted_forms() {
    // 5 keys pass; 6 fail (in the error table).
    assert!(FilterPolicy::parse(r#"{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1]}"#, A).is_ok());
    // Over 256 KB.
    let big = format!(r#"{{"k":["{}"]}}"#, "x".repeat(256 * 1024));
    assert!(FilterPolicy::parse(&big, A).is_err());
    // Accepted as recorded [R], and anything-but suffix per current docs.
    for p in [
        r#"{"key":[{"anything-but":{"prefix":"test-"}}]}"#,
        r#"{"key":[{"anything-but":["test","test2"]}]}"#,
        r#"{"key":[{"anything-but":"test"}]}"#,
        r#"{"key":[{"anything-but":{"suffix":"test"}}]}"#,
        r#"{"key":["s",1,true,false,null]}"#,
    ] {
        assert!(FilterPolicy::parse(p, A).is_ok(), "{p}");
    }
}

#[test]
fn mismatch_reasons() {
    let p = FilterPolicy::parse(r#"{"color":["red"],"price":[{"numeric":["<",100]}]}"#, A).unwrap();
    let reason = p
        .match_attribute_list(&[(
            "price",
            Attribute {
                data_type: N,
                value: "50",
            },
        )])
        .unwrap_err()
        .to_string();
    assert_eq!(reason, "attribute \"color\" is missing");
    let reason = p
        .match_attribute_list(&[
            (
                "color",
                Attribute {
                    data_type: S,
                    value: "red",
                },
            ),
            (
                "price",
                Attribute {
                    data_type: N,
                    value: "120",
                },
            ),
        ])
        .unwrap_err()
        .to_string();
    assert_eq!(
        reason,
        "attribute \"price\": 120 matches none of the conditions"
    );
    let body = FilterPolicy::parse(r#"{"a":{"b":["x"]}}"#, B).unwrap();
    assert_eq!(
        body.match_body(r#"{"a":{"b":"y"}}"#).unwrap_err().reason,
        "\"a.b\": \"y\" matches none of the conditions"
    );
}
