//! Opening the configured input: the one place that maps a [`LiveInput`] to its transport and
//! starts its threads.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

use super::{embedded, follow, spawn, stdin, tcp, tls, Event};
use crate::live::config::{LiveConfig, LiveInput};
use crate::live::error::StartError;
use crate::types::Time;

/// The opened input.
pub(crate) struct Opened {
    /// Names the input in messages about stdin / a followed file.
    pub(crate) source_name: String,
    /// The address actually bound (TCP only).
    pub(crate) local_addr: Option<SocketAddr>,
}

/// Opens `config.input` and starts its threads, which send to `events` until the sequencer is
/// gone or `shutdown` is set. `next_epoch` is the epoch the stream resumes at (a followed file
/// skips what earlier runs made durable).
pub(crate) fn open(
    config: &LiveConfig,
    next_epoch: Time,
    events: SyncSender<Event>,
    shutdown: &Arc<AtomicBool>,
    warnings: &mut Vec<String>,
) -> Result<Opened, StartError> {
    Ok(match &config.input {
        LiveInput::Stdin => {
            spawn("ripples-live-stdin", move || stdin::read(events))?;
            Opened { source_name: "stdin".to_string(), local_addr: None }
        }
        LiveInput::Listen(address) => {
            let tls = match &config.tls {
                Some((cert, key)) => Some(tls::server_config(cert, key).map_err(StartError::Tls)?),
                None => None,
            };
            let local_addr = tcp::listen(address, config.auth_token.clone(), tls, events, shutdown.clone())?;
            Opened { source_name: address.clone(), local_addr: Some(local_addr) }
        }
        LiveInput::Embedded(input) => {
            let Some(receiver) = input.take() else {
                return Err(StartError::Embedded);
            };
            spawn("ripples-live-embedded", move || embedded::read(receiver, events))?;
            Opened { source_name: "the embedded input".to_string(), local_addr: None }
        }
        LiveInput::Follow(path) => {
            follow::start(path, config, next_epoch, events, shutdown.clone(), warnings)?;
            Opened { source_name: path.display().to_string(), local_addr: None }
        }
    })
}
