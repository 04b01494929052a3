//! Retsu embedded in a Rust program (as in a test suite): start a server
//! in-process, drive it with aws-sdk-sqs, move its clock instead of
//! sleeping, shut it down.
//!
//!     cargo run --example embedded

use std::time::Duration;

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::QueueAttributeName;
use retsu::embed::EmbeddedServer;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A frozen clock: nothing times out unless the program says so.
    let server = EmbeddedServer::builder().frozen().start().await?;
    println!("retsu embedded at {}", server.endpoint_url());

    let sqs = aws_sdk_sqs::Client::from_conf(
        aws_sdk_sqs::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(server.region().to_string()))
            .credentials_provider(Credentials::new("test", "test", None, None, "static"))
            .endpoint_url(server.endpoint_url())
            .build(),
    );

    let url = sqs
        .create_queue()
        .queue_name("orders")
        .attributes(QueueAttributeName::VisibilityTimeout, "30")
        .send()
        .await?
        .queue_url
        .expect("a queue URL");
    sqs.send_message()
        .queue_url(&url)
        .message_body("order #1")
        .send()
        .await?;

    // Receive it, and "crash" before deleting it.
    let first = sqs.receive_message().queue_url(&url).send().await?;
    let message = &first.messages()[0];
    println!("received {:?}, not deleted", message.body());
    let hidden = sqs.receive_message().queue_url(&url).send().await?;
    assert!(hidden.messages().is_empty(), "in flight for 30 s");

    // 30 s later (no sleeping) it is back, received a second time.
    server.clock().advance(Duration::from_secs(30));
    let again = sqs
        .receive_message()
        .queue_url(&url)
        .message_system_attribute_names(
            aws_sdk_sqs::types::MessageSystemAttributeName::ApproximateReceiveCount,
        )
        .send()
        .await?;
    let message = &again.messages()[0];
    let count = message
        .attributes()
        .and_then(|a| {
            a.get(&aws_sdk_sqs::types::MessageSystemAttributeName::ApproximateReceiveCount)
        })
        .cloned();
    println!(
        "after advancing 30 s: {:?}, receive count {:?}",
        message.body(),
        count
    );
    assert_eq!(count.as_deref(), Some("2"));
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(message.receipt_handle().unwrap_or_default())
        .send()
        .await?;

    // A long poll answers when the clock passes its wait time, too.
    let poll = tokio::spawn({
        let sqs = sqs.clone();
        let url = url.clone();
        async move {
            sqs.receive_message()
                .queue_url(&url)
                .wait_time_seconds(20)
                .send()
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await; // let the poll reach the server
    server.clock().advance(Duration::from_secs(20));
    let empty = poll.await??;
    println!(
        "20 s long poll on an empty queue answered with {} messages",
        empty.messages().len()
    );

    server.shutdown().await?;
    println!("shut down");
    Ok(())
}
