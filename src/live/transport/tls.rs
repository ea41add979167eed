//! **TLS for TCP producers** (`--tls-cert FILE --tls-key FILE`), with rustls.
//!
//! Each accepted connection gets a TLS session on its socket and a loopback socket pair: one
//! end is served exactly like a plaintext producer ([`super::tcp`]), and a relay thread moves
//! bytes between the other end and the TLS session (decrypting what the producer sends,
//! encrypting the replies). The protocol above is unchanged, `auth` included. The relay waits on
//! both sockets with short read timeouts (a few milliseconds), so a reply is delayed by at most
//! that much. A producer that does not finish its handshake within [`HANDSHAKE_WAIT`] is dropped.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

/// How long a producer has for its TLS handshake.
pub(super) const HANDSHAKE_WAIT: Duration = Duration::from_secs(10);
/// How long the relay waits on the producer's socket before looking at the replies.
const TLS_WAIT: Duration = Duration::from_millis(2);
/// How long it waits on the replies before looking at the producer's socket again.
const PLAIN_WAIT: Duration = Duration::from_millis(1);

/// Loads the certificate chain and private key (PEM files) into a server configuration.
pub(crate) fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    tls_server_config(cert, key).map(Arc::new)
}

/// A rustls server configuration (ring, safe default protocol versions, no client
/// authentication) from a PEM certificate chain and a PEM private key; the errors name the
/// file and say what is wrong with it. The live front end's `--tls-cert/--tls-key` and
/// `--serve-tls-cert/--serve-tls-key` both load their files through it.
pub fn tls_server_config(cert: &Path, key: &Path) -> Result<ServerConfig, String> {
    let read =
        |path: &Path| File::open(path).map(BufReader::new).map_err(|e| format!("cannot read {}: {e}", path.display()));
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_reader_iter(read(cert)?)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: not a PEM certificate chain: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{}: no certificate in the file", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_reader(read(key)?)
        .map_err(|e| format!("{}: not a PEM private key: {e}", key.display()))?;
    let config = ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("TLS: the certificate and key do not fit together: {e}"))?;
    Ok(config)
}

/// Starts a TLS session on `outer` and returns the plaintext end to serve.
pub(super) fn wrap(outer: TcpStream, config: Arc<ServerConfig>) -> io::Result<TcpStream> {
    let pair = TcpListener::bind("127.0.0.1:0")?;
    let served = TcpStream::connect(pair.local_addr()?)?;
    let (plain, _) = pair.accept()?;
    std::thread::Builder::new().name("ripples-live-tls".into()).spawn(move || {
        if let Err(e) = relay(outer, plain, config) {
            if e.kind() != io::ErrorKind::UnexpectedEof {
                eprintln!("ripples: warning: TLS producer dropped: {e}");
            }
        }
    })?;
    Ok(served)
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// Moves bytes between the TLS session on `outer` and the plaintext socket `plain` until either
/// side closes.
fn relay(outer: TcpStream, mut plain: TcpStream, config: Arc<ServerConfig>) -> io::Result<()> {
    let connection = ServerConnection::new(config).map_err(io::Error::other)?;
    let mut tls = StreamOwned::new(connection, outer);
    tls.sock.set_read_timeout(Some(HANDSHAKE_WAIT))?;
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    tls.sock.set_read_timeout(Some(TLS_WAIT))?;
    plain.set_read_timeout(Some(PLAIN_WAIT))?;
    let mut buf = vec![0u8; 16 * 1024];
    let result = loop {
        match tls.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => plain.write_all(&buf[..n])?,
            Err(e) if is_timeout(&e) => {}
            Err(e) => break Err(e),
        }
        match plain.read(&mut buf) {
            Ok(0) => {
                // The server is done with this producer: close the session properly.
                tls.conn.send_close_notify();
                let _ = tls.flush();
                break Ok(());
            }
            Ok(n) => {
                tls.write_all(&buf[..n])?;
                tls.flush()?;
            }
            Err(e) if is_timeout(&e) => {}
            Err(e) => break Err(e),
        }
    };
    let _ = plain.shutdown(Shutdown::Both);
    let _ = tls.sock.shutdown(Shutdown::Both);
    result
}
