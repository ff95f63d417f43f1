//! Running the fixture's interactive flows in either era: a 2026-07-28 request gets one round
//! (its questions as an `input_required` result, the state sealed), a legacy one gets every
//! round at once, each question asked as a real request to the client and its answer awaited.

use super::*;

impl Fixture {
    /// Runs an interactive fixture: one round per 2026-07-28 request, or every round at once
    /// for a legacy client, asking it for real.
    pub(super) async fn interact(
        &self,
        peer: &Peer,
        flow: Flow,
        args: &Map<String, Value>,
        params: &Map<String, Value>,
    ) -> Result<Value, RpcError> {
        if peer.modern {
            let answers = flows::answers(params.get("inputResponses"))?;
            let state = params
                .get("requestState")
                .map(|token| self.seal.open(flow, token))
                .transpose()?;
            return match flow.step(&peer.caps, args, &answers, state.as_ref())? {
                Step::Done(result) => Ok(result),
                Step::Ask { questions, state } => {
                    if !flow.filters_by_capability() {
                        require_capabilities(&peer.caps, &questions)?;
                    }
                    let mut result = json!({
                        "resultType": "input_required",
                        "inputRequests": flows::input_requests(&questions),
                    });
                    if let Some(state) = state {
                        result["requestState"] = json!(self.seal.close(flow, &state));
                    }
                    Ok(result)
                }
            };
        }
        let failed = |why: String| {
            if flow.is_prompt() {
                Err(RpcError::new(code::INVALID_REQUEST, why))
            } else {
                Ok(flows::tool_error(why))
            }
        };
        let mut answers = flows::Answers::new();
        let mut state = None;
        for _ in 0..MAX_ROUNDS {
            let (questions, next) = match flow.step(&peer.caps, args, &answers, state.as_ref())? {
                Step::Done(result) => return Ok(result),
                Step::Ask { questions, state } => (questions, state),
            };
            for q in questions {
                if !peer.caps.contains_key(q.ask.capability()) {
                    return failed(format!(
                        "{} needs the client's {} capability, which it did not declare",
                        flow.name(),
                        q.ask.capability()
                    ));
                }
                match self.ask(q.ask.method(), &q.params).await {
                    Ok(answer) => {
                        answers.insert(q.key.to_owned(), answer);
                    }
                    Err(why) => {
                        return failed(format!(
                            "the client did not answer {}: {why}",
                            q.ask.method()
                        ));
                    }
                }
            }
            state = next;
        }
        failed(format!(
            "{} asked {MAX_ROUNDS} rounds of questions without finishing",
            flow.name()
        ))
    }

    /// Asks the client one question as a real request (legacy) and waits for the answer.
    async fn ask(&self, method: &str, params: &Value) -> Answer {
        let (id, rx) = self
            .asked
            .register(|| Err("the client closed the connection".into()));
        // Forgotten if this call is cancelled while it waits.
        struct Forget<'a>(&'a Pending<Answer>, u64);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                self.0.forget(self.1);
            }
        }
        let _forget = Forget(&self.asked, id);
        self.send(jsonrpc::request(
            &jsonrpc::to_raw(&id),
            method,
            Some(&jsonrpc::to_raw(params)),
        ));
        match tokio::time::timeout(ANSWER_TIMEOUT, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err("the question was dropped".into()),
            Err(_) => Err(format!("no answer within {}s", ANSWER_TIMEOUT.as_secs())),
        }
    }
}

fn require_capabilities(caps: &Map<String, Value>, questions: &[Question]) -> Result<(), RpcError> {
    let missing: Map<String, Value> = questions
        .iter()
        .map(|q| q.ask.capability())
        .filter(|c| !caps.contains_key(*c))
        .map(|c| (c.to_owned(), json!({})))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = missing.keys().map(String::as_str).collect();
    Err(RpcError::new(
        protocol::MISSING_CLIENT_CAPABILITY,
        format!(
            "this request needs the client capabilities {}, which the request did not declare",
            names.join(", ")
        ),
    )
    .with_data(json!({ "requiredCapabilities": missing })))
}
