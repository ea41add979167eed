//! Running the `ripples` binary from tests: temporary files, free loopback ports, waiting for a
//! process with a deadline, and a TCP producer speaking the live protocol.

use std::fs;
use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How long any single step may take before a test gives up (generous: debug build, 2 cores
/// shared with other builds).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The `ripples` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ripples"))
}

/// A path as an owned argument string.
pub fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// A temporary directory, removed when dropped.
pub struct Files {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
}

impl Files {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        Files { _dir: dir, root }
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        fs::write(&p, text).unwrap();
        p
    }
}

/// A file's text; panics naming the file if it cannot be read.
pub fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {}", path.display(), e))
}

/// A free port below the ephemeral range (32768..), so that no outgoing connection of a
/// concurrently running test can take it while a crashed server is being restarted on it. A port
/// is handed out once per test binary: two tests running at once never get the same one (a free
/// port is only free until its server binds it).
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut rng = ChaCha8Rng::seed_from_u64(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
            ^ u64::from(std::process::id()),
    );
    let mut given = GIVEN.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let port = rng.gen_range(20_000..32_000);
        if !given.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.push(port);
            return port;
        }
    }
}

/// Waits for `child` to exit; kills it and panics (with `what`) after `limit`.
pub fn wait_exit(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{}: the server did not exit within {:?}", what, limit);
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// A TCP producer.
pub struct Producer {
    pub stream: TcpStream,
    pub reader: BufReader<TcpStream>,
    /// Lines sent on this connection (for `error N` numbers).
    pub lines: u64,
}

impl Producer {
    /// Connects once and reads `ready E`.
    pub fn connect(port: u16) -> io::Result<(Producer, u64)> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(PATIENCE))?;
        stream.set_nodelay(true)?;
        let reader = BufReader::new(stream.try_clone()?);
        let mut p = Producer { stream, reader, lines: 0 };
        let line = p.line()?;
        let epoch = line
            .strip_prefix("ready ")
            .and_then(|e| e.parse().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("expected ready E, got {:?}", line)))?;
        Ok((p, epoch))
    }

    /// Connects, retrying while the server is not (yet) listening or goes away before `ready`.
    pub fn connect_retry(port: u16) -> (Producer, u64) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match Producer::connect(port) {
                Ok(c) => return c,
                Err(e) if Instant::now() > deadline => panic!("cannot connect to port {}: {}", port, e),
                Err(_) => thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    pub fn send(&mut self, text: &str) -> io::Result<()> {
        self.lines += text.matches('\n').count() as u64;
        self.stream.write_all(text.as_bytes())
    }

    /// The next reply without its newline; an error at end of stream.
    pub fn line(&mut self) -> io::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 || !line.ends_with('\n') {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed"));
        }
        line.pop();
        Ok(line)
    }
}

/// A TLS client session to "localhost" that trusts only `cert` (the tests' self-signed server).
pub fn tls_client(cert: &rcgen::CertifiedKey) -> rustls::ClientConnection {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.cert.der().clone()).unwrap();
    let config =
        rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap()
}
