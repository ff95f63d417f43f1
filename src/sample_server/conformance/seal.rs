//! `requestState` for the fixture's multi-round flows: the state as hex, a dot, and an
//! HMAC-SHA256 over the flow's name and that hex under a key made when the process starts, so
//! a state the client changed, or one issued for another flow, is refused.

use super::flows::{Flow, State};
use crate::jsonrpc::{RpcError, code};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Seals and opens `requestState`.
pub struct Seal {
    key: [u8; 32],
}

#[derive(Serialize, Deserialize)]
struct Sealed {
    flow: String,
    state: State,
}

impl Seal {
    /// A seal with a fresh random key (from the OS; a hash of time and process if that fails).
    pub fn new() -> Seal {
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
        Seal { key }
    }

    #[cfg(test)]
    pub fn with_key(key: [u8; 32]) -> Seal {
        Seal { key }
    }

    pub fn close(&self, flow: Flow, state: &State) -> String {
        let sealed = Sealed {
            flow: flow.name().to_owned(),
            state: state.clone(),
        };
        let body = hex(serde_json::to_string(&sealed)
            .unwrap_or_default()
            .as_bytes());
        let tag = hex(&self.tag(flow, &body));
        format!("{body}.{tag}")
    }

    /// The state a token carries, when this process sealed it for this flow.
    pub fn open(&self, flow: Flow, token: &Value) -> Result<State, RpcError> {
        let refused = || {
            invalid(
                "`requestState` failed its integrity check: it is not a state this server issued for this request",
            )
        };
        let token = token.as_str().ok_or_else(refused)?;
        let (body, tag) = token.split_once('.').ok_or_else(refused)?;
        let expected = hex(&self.tag(flow, body));
        let same = expected.len() == tag.len()
            && expected
                .bytes()
                .zip(tag.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if !same {
            return Err(refused());
        }
        let bytes = unhex(body).ok_or_else(refused)?;
        let sealed: Sealed = serde_json::from_slice(&bytes).map_err(|_| refused())?;
        if sealed.flow != flow.name() {
            return Err(refused());
        }
        Ok(sealed.state)
    }

    fn tag(&self, flow: Flow, body: &str) -> [u8; 32] {
        let mut inner_pad = [0x36u8; 64];
        let mut outer_pad = [0x5cu8; 64];
        for (i, k) in self.key.iter().enumerate() {
            inner_pad[i] ^= k;
            outer_pad[i] ^= k;
        }
        let inner = Sha256::new()
            .chain_update(inner_pad)
            .chain_update(flow.name().as_bytes())
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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}

fn invalid(message: &str) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sealed_state_opens_only_untouched_and_for_its_own_flow() {
        let seal = Seal::with_key([7; 32]);
        let state = State {
            round: 2,
            memo: json!({ "name": "Alice" }).as_object().cloned().unwrap(),
        };
        let token = seal.close(Flow::MultiRound, &state);
        assert_eq!(seal.open(Flow::MultiRound, &json!(token)).unwrap(), state);
        let tampered = json!(format!("{token}-TAMPERED"));
        assert_eq!(
            seal.open(Flow::MultiRound, &tampered).unwrap_err().code,
            code::INVALID_PARAMS
        );
        assert!(seal.open(Flow::RequestState, &json!(token)).is_err());
        assert!(
            Seal::with_key([8; 32])
                .open(Flow::MultiRound, &json!(token))
                .is_err()
        );
        assert!(seal.open(Flow::MultiRound, &json!(42)).is_err());
        assert!(seal.open(Flow::MultiRound, &json!("zz.zz")).is_err());
    }
}
