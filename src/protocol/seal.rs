//! Sealing opaque tokens handed to clients (`requestState`): a body and an HMAC-SHA256 tag over
//! a domain name and that body, under a key made when the process starts. A token a client
//! changed, or one sealed for another domain or by another process, does not open.

use sha2::{Digest, Sha256};

/// The process's sealing key.
pub struct Key {
    key: [u8; 32],
}

impl Default for Key {
    fn default() -> Self {
        Key::new()
    }
}

impl Key {
    /// A fresh random key (from the OS; a hash of the time and process if that fails).
    pub fn new() -> Key {
        let mut key = [0u8; 32];
        let from_os = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key));
        if from_os.is_err() {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            key = Sha256::new()
                .chain_update(now.to_le_bytes())
                .chain_update(std::process::id().to_le_bytes())
                .finalize()
                .into();
        }
        Key { key }
    }

    pub fn with_key(key: [u8; 32]) -> Key {
        Key { key }
    }

    /// `body` (printable ASCII, no `.`) and its tag: `<body>.<tag hex>`.
    pub fn close(&self, domain: &str, body: &str) -> String {
        format!("{body}.{}", hex(&self.tag(domain, body)))
    }

    /// The body of a token this key closed for `domain`; `None` for anything else.
    pub fn open<'t>(&self, domain: &str, token: &'t str) -> Option<&'t str> {
        let (body, tag) = token.rsplit_once('.')?;
        let expected = hex(&self.tag(domain, body));
        let same = expected.len() == tag.len()
            && expected
                .bytes()
                .zip(tag.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        same.then_some(body)
    }

    fn tag(&self, domain: &str, body: &str) -> [u8; 32] {
        let mut inner_pad = [0x36u8; 64];
        let mut outer_pad = [0x5cu8; 64];
        for (i, k) in self.key.iter().enumerate() {
            inner_pad[i] ^= k;
            outer_pad[i] ^= k;
        }
        let inner = Sha256::new()
            .chain_update(inner_pad)
            .chain_update(domain.as_bytes())
            .chain_update(b"\0")
            .chain_update(body.as_bytes())
            .finalize();
        Sha256::new()
            .chain_update(outer_pad)
            .chain_update(inner)
            .finalize()
            .into()
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_opens_only_untouched_for_its_domain_and_key() {
        let k = Key::with_key([7; 32]);
        let t = k.close("calls", "abc123");
        assert_eq!(k.open("calls", &t), Some("abc123"));
        assert_eq!(k.open("other", &t), None);
        assert_eq!(Key::with_key([8; 32]).open("calls", &t), None);
        assert_eq!(k.open("calls", &t.replace("abc", "abd")), None);
        assert_eq!(k.open("calls", "nodot"), None);
        assert_eq!(unhex(&hex(b"\x00\xff")), Some(vec![0, 255]));
        assert_eq!(unhex("zz"), None);
    }

    proptest::proptest! {
        #[test]
        fn any_token_is_refused_without_panicking(token in "\\PC{0,120}") {
            let k = Key::with_key([1; 32]);
            proptest::prop_assert!(k.open("calls", &token).is_none());
            let _ = unhex(&token);
        }
    }
}
