//! The receiver's OTLP/gRPC side: plain-text HTTP/2 (prior knowledge, as a gRPC client
//! speaks to an `http://` endpoint) through the `h2` crate, on a current-thread tokio
//! runtime on the receiver's thread. A unary `Export` call's message (one length-prefixed
//! gRPC frame, uncompressed) is decoded as an OTLP/HTTP body is; the answer is an empty
//! `Export…ServiceResponse` and `grpc-status: 0` in the trailers. An unknown method is
//! counted and answered `UNIMPLEMENTED` (12). No TLS, no compression.

use super::{BODY_MAX, Received, Signal};
use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use std::sync::{Arc, Mutex};

const TRACES: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
const METRICS: &str = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";

/// gRPC status codes the receiver answers with.
const OK: u32 = 0;
const UNIMPLEMENTED: u32 = 12;

/// Serves calls on `listener`, each connection on a task of its own, until the receiver
/// stops ([`crate::loopback::Served`]).
pub(super) async fn serve(listener: tokio::net::TcpListener, received: Arc<Mutex<Received>>) {
    loop {
        if let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(connection(stream, received.clone()));
        }
    }
}

/// One HTTP/2 connection: each stream is one call, served on a task of its own while the
/// connection keeps being driven here.
async fn connection(stream: tokio::net::TcpStream, received: Arc<Mutex<Received>>) {
    let Ok(mut connection) = h2::server::handshake(stream).await else {
        return;
    };
    while let Some(Ok((request, respond))) = connection.accept().await {
        let received = received.clone();
        tokio::spawn(async move {
            let _ = call(request, respond, &received).await;
        });
    }
}

async fn call(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    received: &Mutex<Received>,
) -> Result<(), h2::Error> {
    let path = request.uri().path().to_owned();
    let mut body = request.into_body();
    let mut message = Vec::new();
    let mut too_large = false;
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        too_large |= message.len() + chunk.len() > BODY_MAX;
        if !too_large {
            message.extend_from_slice(&chunk);
        }
    }
    let signal = match path.as_str() {
        TRACES => Some(Signal::Traces),
        METRICS => Some(Signal::Metrics),
        _ => None,
    };
    let status = {
        let mut received = received.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match signal {
            Some(signal) => {
                received.record(signal, if too_large { None } else { unframe(&message).map(<[u8]>::to_vec) });
                OK
            }
            None => {
                *received.other.entry(path).or_default() += 1;
                UNIMPLEMENTED
            }
        }
    };
    let mut response = http::Response::new(());
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    let mut stream = respond.send_response(response, false)?;
    if status == OK {
        // An `Export…ServiceResponse` with nothing rejected encodes to no bytes at all.
        stream.send_data(Bytes::from_static(&[0, 0, 0, 0, 0]), false)?;
    }
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from(status));
    stream.send_trailers(trailers)
}

/// The message of a request body that is exactly one uncompressed gRPC frame: a zero
/// flag byte, the length (4 bytes, big-endian), the message.
fn unframe(body: &[u8]) -> Option<&[u8]> {
    let (&[0, a, b, c, d], message) = body.split_first_chunk::<5>()? else {
        return None;
    };
    (u32::from_be_bytes([a, b, c, d]) as usize == message.len()).then_some(message)
}

#[cfg(test)]
mod tests {
    use super::unframe;
    use crate::otlp::Receiver;
    use std::net::TcpStream;

    #[test]
    fn a_stopped_grpc_receiver_refuses() {
        let mut receiver = Receiver::start_grpc(0).unwrap();
        let port = receiver.port();
        let open = TcpStream::connect(("127.0.0.1", port)).unwrap();
        receiver.stop();
        drop(open);
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    }

    #[test]
    fn only_one_whole_uncompressed_frame_is_a_message() {
        assert_eq!(unframe(&[0, 0, 0, 0, 2, 7, 8]), Some(&[7u8, 8][..]));
        assert_eq!(unframe(&[0, 0, 0, 0, 0]), Some(&[][..]));
        assert_eq!(unframe(&[1, 0, 0, 0, 2, 7, 8]), None, "compressed");
        assert_eq!(unframe(&[0, 0, 0, 0, 3, 7, 8]), None, "short");
        assert_eq!(unframe(&[0, 0, 0]), None);
    }
}
