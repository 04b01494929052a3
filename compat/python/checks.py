"""Checks shared by the Python-driven compat suites (boto3 and aws-cli):
scenario failures and the byte-exact MD5s of spec section 4.3."""

import hashlib
import struct

TRACE_HEADER = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"


class Fail(Exception):
    """A scenario expectation that did not hold."""


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def eq(actual, expected, what):
    if actual != expected:
        raise Fail(f"{what}: expected {expected!r}, got {actual!r}")


# ---------------------------------------------------------------- MD5 (spec §4.3)


def md5_hex(data):
    return hashlib.md5(data).hexdigest()


def md5_of_attributes(attrs):
    """MD5OfMessageAttributes / MD5OfMessageSystemAttributes, byte-exact."""
    h = hashlib.md5()

    def put(b):
        h.update(struct.pack(">I", len(b)))
        h.update(b)

    for name in sorted(attrs):
        a = attrs[name]
        put(name.encode("utf-8"))
        put(a["DataType"].encode("utf-8"))
        if a.get("StringValue") is not None:
            h.update(b"\x01")
            put(a["StringValue"].encode("utf-8"))
        elif a.get("BinaryValue") is not None:
            h.update(b"\x02")
            v = a["BinaryValue"]
            put(v if isinstance(v, (bytes, bytearray)) else v.encode("utf-8"))
    return h.hexdigest()


# Known vectors from the spec, checked at import so a broken helper cannot
# masquerade as a server bug.
assert md5_of_attributes({"Foo": {"DataType": "String", "StringValue": "Bar"}}) == (
    "ae7155c6026991b6d54b11589678bf9c"
)
assert md5_of_attributes({"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}}) == (
    "5ae4d5d7636402d80f4eb6d213245a88"
)
