//! Every subscriber of the engine's event stream is attached here, and
//! nowhere else.
//!
//! | subscriber | attached | why then |
//! |---|---|---|
//! | `journal/`'s feed | when the data directory opens ([`attach_journal`]) | before the configuration file's queues are made, so their creation is journaled too |
//! | `metrics` | when the server starts ([`attach`]) | always on: `/metrics` |
//! | `history` | when the server starts, unless `--no-admin` or `--history-events 0` | only when someone can read it |
//! | `event_stream` | when the server starts, unless `--no-admin` | costs one atomic load per event while nobody reads the stream |
//! | `topic_steps` | when the server starts, unless `--no-admin` | the console's topics screen reads it |

use std::sync::Arc;

use crate::config::Config;
use crate::engine::events::Subscriber;
use crate::engine::Engine;
use crate::event_stream::EventStream;
use crate::history::{History, HistoryLimits};
use crate::metrics::Metrics;
use crate::topic_steps::TopicSteps;

/// The server's own subscribers, for the handlers that read them.
pub struct Observers {
    pub metrics: Arc<Metrics>,
    pub history: Option<Arc<History>>,
    pub event_stream: Option<Arc<EventStream>>,
    pub topic_steps: Option<Arc<TopicSteps>>,
}

/// Attaches the server's subscribers to `engine` as `config` asks.
pub fn attach(engine: &Engine, config: &Config) -> Observers {
    let metrics = Arc::new(Metrics::new());
    engine.subscribe(metrics.clone());
    let admin = !config.no_admin;
    let history = (admin && config.history_events > 0).then(|| {
        let history = Arc::new(History::new(HistoryLimits {
            max_events: config.history_events,
            max_finished: config.history_finished,
        }));
        engine.subscribe(history.clone());
        history
    });
    let event_stream = admin.then(|| {
        let stream = Arc::new(EventStream::default());
        engine.subscribe(stream.clone());
        stream
    });
    let topic_steps = admin.then(|| {
        let steps = Arc::new(TopicSteps::default());
        engine.subscribe(steps.clone());
        steps
    });
    Observers {
        metrics,
        history,
        event_stream,
        topic_steps,
    }
}

/// Attaches the journal's feed (see the table above for when).
pub fn attach_journal(engine: &Engine, feed: Arc<dyn Subscriber>) {
    engine.subscribe(feed);
}
