//! SDK call chains and message accessors that several test files share:
//! deleting or re-timing a received message by its handle, a background
//! long poll, and reading a message's system attributes.

use std::collections::HashMap;

use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::operation::change_message_visibility::ChangeMessageVisibilityError;
use aws_sdk_sqs::operation::create_queue::CreateQueueError;
use aws_sdk_sqs::operation::delete_message::DeleteMessageError;
use aws_sdk_sqs::operation::send_message::SendMessageOutput;
use aws_sdk_sqs::operation::set_queue_attributes::SetQueueAttributesError;
use aws_sdk_sqs::types::{Message, MessageSystemAttributeName, QueueAttributeName};
use aws_sdk_sqs::Client;
use tokio::task::JoinHandle;

use super::{failure, service_error, Failure, TestServer, ACCOUNT, REGION};

impl TestServer {
    /// Creates a FIFO queue (`FifoQueue=true`) with `extra` attributes.
    pub async fn create_fifo_queue(&self, name: &str, extra: &[(&str, &str)]) -> String {
        let mut attrs = vec![("FifoQueue", "true")];
        attrs.extend_from_slice(extra);
        self.create_queue_with(name, &attrs).await
    }

    /// Creates `name` wired to the dead-letter queue `dlq` (by name, in
    /// the default region and account) after `max` receives, with
    /// `extra` attributes.
    pub async fn create_source_queue(
        &self,
        name: &str,
        dlq: &str,
        max: u32,
        extra: &[(&str, &str)],
    ) -> String {
        let policy = redrive_policy(dlq, max);
        let mut attrs = vec![("RedrivePolicy", policy.as_str())];
        attrs.extend_from_slice(extra);
        self.create_queue_with(name, &attrs).await
    }

    /// DeleteQueue; the call must succeed.
    pub async fn delete_queue(&self, url: &str) {
        self.client
            .delete_queue()
            .queue_url(url)
            .send()
            .await
            .unwrap_or_else(|e| panic!("DeleteQueue {url}: {e:?}"));
    }

    /// SendMessage held back `delay` seconds; the call must succeed.
    pub async fn send_delayed(&self, url: &str, body: &str, delay: i32) {
        self.client
            .send_message()
            .queue_url(url)
            .message_body(body)
            .delay_seconds(delay)
            .send()
            .await
            .unwrap_or_else(|e| panic!("SendMessage {body:?}: {e:?}"));
    }

    /// SendMessage with a MessageGroupId and, if given, a
    /// MessageDeduplicationId; the call must succeed.
    pub async fn send_to_group(
        &self,
        url: &str,
        body: &str,
        group: &str,
        dedup: Option<&str>,
    ) -> SendMessageOutput {
        let mut req = self
            .client
            .send_message()
            .queue_url(url)
            .message_body(body)
            .message_group_id(group);
        if let Some(d) = dedup {
            req = req.message_deduplication_id(d);
        }
        req.send()
            .await
            .unwrap_or_else(|e| panic!("SendMessage {body:?}: {e:?}"))
    }

    /// CreateQueue with `attributes`; the call must fail with a service
    /// error.
    pub async fn create_queue_failure(
        &self,
        name: &str,
        attributes: &[(&str, &str)],
    ) -> Failure<CreateQueueError> {
        let mut req = self.client.create_queue().queue_name(name);
        for (k, v) in attributes {
            req = req.attributes(QueueAttributeName::from(*k), *v);
        }
        failure(req.send().await)
    }

    /// The typed error of a CreateQueue that must fail.
    pub async fn create_queue_error(
        &self,
        name: &str,
        attributes: &[(&str, &str)],
    ) -> CreateQueueError {
        self.create_queue_failure(name, attributes).await.err
    }

    /// SetQueueAttributes in one request; the call must succeed.
    pub async fn set_attributes(&self, url: &str, attributes: &[(&str, &str)]) {
        let mut req = self.client.set_queue_attributes().queue_url(url);
        for (k, v) in attributes {
            req = req.attributes(QueueAttributeName::from(*k), *v);
        }
        req.send()
            .await
            .unwrap_or_else(|e| panic!("SetQueueAttributes {attributes:?}: {e:?}"));
    }

    /// The typed error of a SetQueueAttributes (one request) that must
    /// fail.
    pub async fn set_attributes_error(
        &self,
        url: &str,
        attributes: &[(&str, &str)],
    ) -> SetQueueAttributesError {
        let mut req = self.client.set_queue_attributes().queue_url(url);
        for (k, v) in attributes {
            req = req.attributes(QueueAttributeName::from(*k), *v);
        }
        service_error(req.send().await)
    }

    /// DeleteMessage by receipt handle; the call must succeed.
    pub async fn delete_message(&self, url: &str, handle: &str) {
        self.client
            .delete_message()
            .queue_url(url)
            .receipt_handle(handle)
            .send()
            .await
            .expect("DeleteMessage");
    }

    /// DeleteMessage by receipt handle; the call must fail with a service
    /// error.
    pub async fn delete_message_failure(
        &self,
        url: &str,
        handle: &str,
    ) -> Failure<DeleteMessageError> {
        failure(
            self.client
                .delete_message()
                .queue_url(url)
                .receipt_handle(handle)
                .send()
                .await,
        )
    }

    /// ChangeMessageVisibility by receipt handle, with the typed service
    /// error when it fails.
    pub async fn change_visibility(
        &self,
        url: &str,
        handle: &str,
        timeout: i32,
    ) -> Result<(), ChangeMessageVisibilityError> {
        match self
            .client
            .change_message_visibility()
            .queue_url(url)
            .receipt_handle(handle)
            .visibility_timeout(timeout)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => Err(service_error::<(), _>(Err(e))),
        }
    }
}

/// CreateQueue through `client` (another region's or account's) with
/// `attributes`; the call must succeed. The queue's URL.
pub async fn create_queue_via(client: &Client, name: &str, attributes: &[(&str, &str)]) -> String {
    let mut req = client.create_queue().queue_name(name);
    for (k, v) in attributes {
        req = req.attributes(QueueAttributeName::from(*k), *v);
    }
    let out = req.send().await.expect("CreateQueue");
    out.queue_url().expect("QueueUrl").to_string()
}

/// SendMessage through `client`; the call must succeed. The message id.
pub async fn send_via(client: &Client, url: &str, body: &str) -> String {
    client
        .send_message()
        .queue_url(url)
        .message_body(body)
        .send()
        .await
        .expect("SendMessage")
        .message_id()
        .expect("MessageId")
        .to_string()
}

/// A ReceiveMessage of up to ten messages through `client`, nothing else
/// set (the queue's wait time applies); the call must succeed.
pub async fn receive_via(client: &Client, url: &str) -> Vec<Message> {
    client
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(10)
        .send()
        .await
        .expect("ReceiveMessage")
        .messages
        .unwrap_or_default()
}

/// Starts a ReceiveMessage of up to ten messages (every system attribute)
/// in the background. `wait` is WaitTimeSeconds (`None` leaves it out so
/// the queue default applies).
pub fn spawn_receive(client: &Client, url: &str, wait: Option<i32>) -> JoinHandle<Vec<Message>> {
    let client = client.clone();
    let url = url.to_string();
    tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .set_wait_time_seconds(wait)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .send()
            .await
            .expect("ReceiveMessage")
            .messages
            .unwrap_or_default()
    })
}

/// Asserts a service error's code and message, both exactly.
pub fn assert_service_error<E: ProvideErrorMetadata + std::fmt::Debug>(
    err: &E,
    code: &str,
    message: &str,
) {
    assert_eq!(err.code(), Some(code), "{err:?}");
    assert_eq!(err.message(), Some(message), "{err:?}");
}

/// The queue ARN Retsu gives `name` in the default region and account.
pub fn arn(name: &str) -> String {
    format!("arn:aws:sqs:{REGION}:{ACCOUNT}:{name}")
}

/// A RedrivePolicy sending to the queue `dlq` of the default region and
/// account after `max` receives.
pub fn redrive_policy(dlq: &str, max: u32) -> String {
    format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":{max}}}"#,
        arn(dlq)
    )
}

/// The bodies of `msgs`, in order.
pub fn bodies(msgs: &[Message]) -> Vec<&str> {
    msgs.iter().map(|m| m.body().unwrap()).collect()
}

/// A message's system attributes by name.
pub fn system_attrs(m: &Message) -> HashMap<String, String> {
    m.attributes()
        .map(|a| {
            a.iter()
                .map(|(k, v)| (k.as_str().to_string(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// One system attribute of a message, if present.
pub fn sys(m: &Message, name: MessageSystemAttributeName) -> Option<String> {
    m.attributes().and_then(|a| a.get(&name)).cloned()
}

pub fn receive_count(m: &Message) -> String {
    sys(m, MessageSystemAttributeName::ApproximateReceiveCount).expect("ApproximateReceiveCount")
}

/// Every body left in a queue, sorted (each received with a long
/// visibility timeout, so none comes twice).
pub async fn sorted_bodies(client: &Client, url: &str) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        let r = client
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .visibility_timeout(600)
            .send()
            .await
            .unwrap();
        if r.messages().is_empty() {
            break;
        }
        out.extend(
            r.messages()
                .iter()
                .filter_map(|m| m.body().map(String::from)),
        );
    }
    out.sort();
    out
}
