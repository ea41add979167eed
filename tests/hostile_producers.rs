//! Hostile and broken TCP producers do not disturb the others: an overlong line, binary garbage,
//! a producer that connects and never sends, one that sends half a line and vanishes, random
//! bytes from 20 fuzzing producers (fixed seed), and a thousand connections at once. A well-behaved producer streams its epochs meanwhile; every
//! epoch is acknowledged once and the result equals a file run of its epochs alone.

mod common;

use std::fs;
use std::io::Write;
use std::net::TcpStream;
use std::process::Stdio;

use common::process::*;
use common::session::*;
use rand::{Rng, SeedableRng};

const EPOCHS: usize = 6;
const BATCH: usize = 10;

#[test]
fn broken_producers_are_answered_and_the_others_unaffected() {
    let files = Files::new();
    let texts = epoch_texts(99, 30, EPOCHS, BATCH);
    let (ref_changes, ref_output) = reference(&files, &texts, BATCH);

    let port = free_port();
    let mut server = bin()
        .args(["run", "wcc", "-q", "--listen", &port.to_string()])
        .args(["--changes", &s(&files.path("c.txt")), "--output", &s(&files.path("o.txt"))])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(files.path("server.err")).unwrap())
        .spawn()
        .unwrap();
    let (mut good, ready) = Producer::connect_retry(port);
    assert_eq!(ready, 1);

    // Connects and never sends.
    let (_idle, _) = Producer::connect_retry(port);
    // Sends half a line and vanishes: nothing of it may be applied.
    {
        let (mut half, _) = Producer::connect_retry(port);
        half.send("+ 1000 20").unwrap();
    }
    // An overlong line (2 MiB), then more of the same connection stays usable.
    let (mut long, _) = Producer::connect_retry(port);
    let mut huge = vec![b'7'; 2 << 20];
    huge.push(b'\n');
    long.stream.write_all(&huge).unwrap();
    assert_eq!(long.line().unwrap(), "error 1: line too long (more than 1048576 bytes)");
    // Binary garbage: every line is answered with its number.
    let (mut garbage, _) = Producer::connect_retry(port);
    garbage.stream.write_all(b"\x00\x01\x02\n+ x y\n\xff\xfe\xfd garbage\n- - -\n").unwrap();
    for n in 1..=4 {
        let reply = garbage.line().unwrap();
        assert!(reply.starts_with(&format!("error {}: ", n)), "line {}: {:?}", n, reply);
    }
    // A thousand connections at once.
    let crowd: Vec<TcpStream> = (0..1000).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
    // Fuzz (fixed seed): producers sending random bytes, some with newlines, then half-closing
    // or vanishing. Their lines are rejected (a rejected line discards the producer's pending
    // updates, and with this seed none of them is a valid update); they never commit (checked),
    // so nothing of theirs is applied and the result must equal the reference.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4242);
    let mut fuzzers = Vec::new();
    for i in 0..20 {
        let (mut f, _) = Producer::connect_retry(port);
        let len = rng.gen_range(1..20_000);
        let bytes: Vec<u8> = (0..len).map(|_| if rng.gen_bool(0.05) { b'\n' } else { rng.gen() }).collect();
        assert!(!bytes.windows(7).any(|w| w == b"commit\n"), "seed 4242: fuzz bytes spell commit");
        f.stream.write_all(&bytes).unwrap();
        match i % 3 {
            0 => drop(f),
            1 => f.stream.shutdown(std::net::Shutdown::Write).unwrap(),
            _ => fuzzers.push(f),
        }
    }

    for (i, text) in texts.iter().enumerate() {
        good.send(&(text.clone() + "commit\n")).unwrap();
        assert_eq!(good.line().unwrap(), format!("ok {}", i + 1));
    }
    drop(crowd);
    good.send("end\n").unwrap();
    let _ = good.line();
    let status = wait_exit(&mut server, PATIENCE, "the server");
    let stderr = read(&files.path("server.err"));
    assert!(status.success(), "{}", stderr);
    assert!(!stderr.contains("panicked"), "{}", stderr);
    assert_eq!(read(&files.path("c.txt")), ref_changes, "--changes differ");
    assert_eq!(read(&files.path("o.txt")), ref_output, "--output differs");
}

/// Reads one reply line from a raw connection (`None` at end of stream).
fn reply(stream: &TcpStream) -> Option<String> {
    use std::io::BufRead;
    let mut line = String::new();
    let n = std::io::BufReader::new(stream).read_line(&mut line).ok()?;
    (n > 0).then(|| line.trim_end().to_string())
}

#[test]
fn producers_authenticate_with_a_token() {
    let files = Files::new();
    let token = files.write("token", "s3cret-token\n");
    // A non-loopback address needs a token.
    let out = bin().args(["run", "wcc", "--listen", "0.0.0.0:7", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a loopback address"), "{:?}", out);

    let port = free_port();
    let mut server = bin()
        .args(["run", "wcc", "-q", "--listen", &port.to_string(), "--auth-token-file", &s(&token)])
        .args(["--output", &s(&files.path("o.txt"))])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(files.path("server.err")).unwrap())
        .spawn()
        .unwrap();
    let connect = || loop {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            s.set_read_timeout(Some(PATIENCE)).unwrap();
            return s;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let mut none = connect();
    none.write_all(b"+ 1 2\n").unwrap();
    assert_eq!(reply(&none).as_deref(), Some("error 1: expected auth TOKEN as the first line"));
    assert_eq!(reply(&none), None, "closed after a failed auth");
    let mut wrong = connect();
    wrong.write_all(b"auth s3cret-tokem\n").unwrap();
    assert_eq!(reply(&wrong).as_deref(), Some("error 1: authentication failed"));

    let mut right = connect();
    right.write_all(b"auth s3cret-token\n").unwrap();
    let mut reader = std::io::BufReader::new(right.try_clone().unwrap());
    let mut next = || {
        use std::io::BufRead;
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        line.trim_end().to_string()
    };
    assert_eq!(next(), "ready 1");
    right.write_all(b"+ 1 2\nbad\n").unwrap();
    assert!(next().starts_with("error 3: "), "line numbers count the auth line");
    right.write_all(b"+ 2 3\ncommit\nend\n").unwrap();
    assert_eq!(next(), "ok 1");
    let status = wait_exit(&mut server, PATIENCE, "the server");
    assert!(status.success(), "{}", read(&files.path("server.err")));
    assert_eq!(read(&files.path("o.txt")), "2 2\n3 2\n", "only the authenticated producer's epoch");
}

/// A TLS client of the live protocol (trusting `cert`), reading replies line by line.
struct TlsProducer {
    tls: rustls::StreamOwned<rustls::ClientConnection, TcpStream>,
}

impl TlsProducer {
    fn connect(port: u16, cert: &rcgen::CertifiedKey) -> TlsProducer {
        let conn = tls_client(cert);
        let tcp = loop {
            if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
                break s;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        tcp.set_read_timeout(Some(PATIENCE)).unwrap();
        TlsProducer { tls: rustls::StreamOwned::new(conn, tcp) }
    }
    fn send(&mut self, text: &str) {
        self.tls.write_all(text.as_bytes()).unwrap();
        self.tls.flush().unwrap();
    }
    fn line(&mut self) -> Option<String> {
        use std::io::Read;
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            match self.tls.read(&mut byte) {
                Ok(0) | Err(_) => return None,
                Ok(_) if byte[0] == b'\n' => return Some(String::from_utf8_lossy(&line).into_owned()),
                Ok(_) => line.push(byte[0]),
            }
        }
    }
}

#[test]
fn producers_speak_tls() {
    let files = Files::new();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert_file = files.write("cert.pem", &cert.cert.pem());
    let key_file = files.write("key.pem", &cert.key_pair.serialize_pem());
    let token = files.write("token", "tls-token");
    let port = free_port();
    let mut server = bin()
        .args(["run", "wcc", "-q", "--listen", &port.to_string(), "--output", &s(&files.path("o.txt"))])
        .args(["--tls-cert", &s(&cert_file), "--tls-key", &s(&key_file), "--auth-token-file", &s(&token)])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(files.path("server.err")).unwrap())
        .spawn()
        .unwrap();
    // Plaintext to a TLS listener: no `ready`, the connection is dropped.
    let plain = loop {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            break s;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    plain.set_read_timeout(Some(PATIENCE)).unwrap();
    (&plain).write_all(b"auth tls-token\n+ 5 6\ncommit\n").unwrap();
    // It gets a TLS alert at most, never `ready`, and the connection is closed.
    let got = reply(&plain).unwrap_or_default();
    assert!(!got.contains("ready"), "a plaintext producer was served: {:?}", got);
    assert_eq!(reply(&plain), None, "the connection is closed");

    let mut p = TlsProducer::connect(port, &cert);
    p.send("auth tls-token\n");
    assert_eq!(p.line().as_deref(), Some("ready 1"));
    p.send("+ 1 2\n+ 2 3\ncommit\n");
    assert_eq!(p.line().as_deref(), Some("ok 1"));
    p.send("+ 7 8\ncommit\nend\n");
    assert_eq!(p.line().as_deref(), Some("ok 2"));
    let status = wait_exit(&mut server, PATIENCE, "the TLS server");
    assert!(status.success(), "{}", read(&files.path("server.err")));
    assert_eq!(read(&files.path("o.txt")), "1 1\n2 1\n3 1\n7 7\n8 7\n");

    // A key that does not match the certificate is refused at start.
    let other = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let other_key = files.write("other-key.pem", &other.key_pair.serialize_pem());
    let out = bin()
        .args(["run", "wcc", "-q", "--listen", &free_port().to_string()])
        .args(["--tls-cert", &s(&cert_file), "--tls-key", &s(&other_key)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("do not fit together"), "{:?}", out);
}
