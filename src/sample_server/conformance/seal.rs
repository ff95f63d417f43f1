//! `requestState` for the fixture's multi-round flows: the state as hex, sealed for the flow's
//! name (`protocol::seal`), so a state the client changed, or one issued for another flow, is
//! refused.

use super::flows::{Flow, State};
use crate::jsonrpc::{RpcError, code};
use crate::protocol::seal::{Key, hex, unhex};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Seals and opens `requestState`.
pub struct Seal {
    key: Key,
}

#[derive(Serialize, Deserialize)]
struct Sealed {
    flow: String,
    state: State,
}

impl Seal {
    /// A seal with a fresh random key.
    pub fn new() -> Seal {
        Seal { key: Key::new() }
    }

    #[cfg(test)]
    pub fn with_key(key: [u8; 32]) -> Seal {
        Seal {
            key: Key::with_key(key),
        }
    }

    pub fn close(&self, flow: Flow, state: &State) -> String {
        let sealed = Sealed {
            flow: flow.name().to_owned(),
            state: state.clone(),
        };
        let body = hex(serde_json::to_string(&sealed)
            .unwrap_or_default()
            .as_bytes());
        self.key.close(flow.name(), &body)
    }

    /// The state a token carries, when this process sealed it for this flow.
    pub fn open(&self, flow: Flow, token: &Value) -> Result<State, RpcError> {
        let refused = || {
            invalid(
                "`requestState` failed its integrity check: it is not a state this server issued for this request",
            )
        };
        let token = token.as_str().ok_or_else(refused)?;
        let body = self.key.open(flow.name(), token).ok_or_else(refused)?;
        let bytes = unhex(body).ok_or_else(refused)?;
        let sealed: Sealed = serde_json::from_slice(&bytes).map_err(|_| refused())?;
        if sealed.flow != flow.name() {
            return Err(refused());
        }
        Ok(sealed.state)
    }
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
