//! The fixture's interactive tools and prompt: each is a small state machine that either asks
//! the client questions (elicitation, sampling, roots) or finishes. The same machine serves both
//! eras: a 2026-07-28 request gets the questions back as an `input_required` result and comes
//! again with the answers, a legacy one has them asked as real requests to the client. Between
//! rounds the machine's state travels as an opaque `requestState` sealed with a key only this
//! process knows, so a state the client changed is refused. Nothing here does I/O.

use crate::jsonrpc::{RpcError, code};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// One interactive fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Sampling,
    Elicitation,
    ElicitationDefaults,
    ElicitationEnums,
    MissingCapability,
    StreamingElicitation,
    AskName,
    AskCapital,
    AskRoots,
    RequestState,
    MultipleInputs,
    MultiRound,
    TamperedState,
    Capabilities,
    /// The prompt `test_input_required_result_prompt`.
    PromptContext,
}

const TOOL_FLOWS: &[(&str, Flow)] = &[
    ("test_sampling", Flow::Sampling),
    ("test_elicitation", Flow::Elicitation),
    (
        "test_elicitation_sep1034_defaults",
        Flow::ElicitationDefaults,
    ),
    ("test_elicitation_sep1330_enums", Flow::ElicitationEnums),
    ("test_missing_capability", Flow::MissingCapability),
    ("test_streaming_elicitation", Flow::StreamingElicitation),
    ("test_input_required_result_elicitation", Flow::AskName),
    ("test_input_required_result_sampling", Flow::AskCapital),
    ("test_input_required_result_list_roots", Flow::AskRoots),
    (
        "test_input_required_result_request_state",
        Flow::RequestState,
    ),
    (
        "test_input_required_result_multiple_inputs",
        Flow::MultipleInputs,
    ),
    ("test_input_required_result_multi_round", Flow::MultiRound),
    (
        "test_input_required_result_tampered_state",
        Flow::TamperedState,
    ),
    (
        "test_input_required_result_capabilities",
        Flow::Capabilities,
    ),
];

const PROMPT_FLOWS: &[(&str, Flow)] = &[("test_input_required_result_prompt", Flow::PromptContext)];

/// What a question asks the client for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    Elicit,
    Sample,
    ListRoots,
}

impl Ask {
    pub fn method(self) -> &'static str {
        match self {
            Ask::Elicit => "elicitation/create",
            Ask::Sample => "sampling/createMessage",
            Ask::ListRoots => "roots/list",
        }
    }

    /// The client capability the question needs.
    pub fn capability(self) -> &'static str {
        match self {
            Ask::Elicit => "elicitation",
            Ask::Sample => "sampling",
            Ask::ListRoots => "roots",
        }
    }
}

/// One question, under the key its answer comes back with.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub key: &'static str,
    pub ask: Ask,
    pub params: Value,
}

/// What the machine keeps between rounds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub round: u32,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub memo: Map<String, Value>,
}

/// The machine's next move.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Ask {
        questions: Vec<Question>,
        state: Option<State>,
    },
    Done(Value),
}

/// The client's answers so far, by question key.
pub type Answers = Map<String, Value>;

impl Flow {
    pub fn tool(name: &str) -> Option<Flow> {
        TOOL_FLOWS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    pub fn prompt(name: &str) -> Option<Flow> {
        PROMPT_FLOWS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    }

    pub fn name(self) -> &'static str {
        TOOL_FLOWS
            .iter()
            .chain(PROMPT_FLOWS)
            .find(|(_, f)| *f == self)
            .map_or("", |(n, _)| n)
    }

    pub fn is_prompt(self) -> bool {
        self == Flow::PromptContext
    }

    /// Whether the machine picks its questions from the client's capabilities itself; the
    /// others need every capability their questions use.
    pub fn filters_by_capability(self) -> bool {
        self == Flow::Capabilities
    }

    /// One round: the answers and state the client brought, and the machine's next move.
    pub fn step(
        self,
        caps: &Map<String, Value>,
        args: &Map<String, Value>,
        answers: &Answers,
        state: Option<&State>,
    ) -> Result<Step, RpcError> {
        let ask = |questions: Vec<Question>| Step::Ask {
            questions,
            state: None,
        };
        Ok(match self {
            Flow::Sampling => {
                let Some(prompt) = args.get("prompt").and_then(Value::as_str) else {
                    return Ok(Step::Done(tool_error("`prompt` (a string) is required")));
                };
                match sampled(answers, "sampling")? {
                    Some(text) => Step::Done(text_result(format!("LLM response: {text}"))),
                    None => ask(vec![sample("sampling", prompt, 100)]),
                }
            }
            Flow::Elicitation => {
                let Some(message) = args.get("message").and_then(Value::as_str) else {
                    return Ok(Step::Done(tool_error("`message` (a string) is required")));
                };
                match elicited(answers, "user_info")? {
                    Some(e) => Step::Done(text_result(format!("User response: {}", e.summary()))),
                    None => ask(vec![elicit(
                        "user_info",
                        message,
                        json!({
                            "type": "object",
                            "properties": {
                                "username": { "type": "string", "description": "User's response" },
                                "email": { "type": "string", "description": "User's email address" },
                            },
                            "required": ["username", "email"],
                        }),
                    )]),
                }
            }
            Flow::ElicitationDefaults => match elicited(answers, "defaults")? {
                Some(e) => Step::Done(completed(&e)),
                None => ask(vec![elicit(
                    "defaults",
                    "Please review and update the form fields with defaults",
                    json!({
                        "type": "object",
                        "properties": {
                            "name": { "type": "string", "description": "User name", "default": "John Doe" },
                            "age": { "type": "integer", "description": "User age", "default": 30 },
                            "score": { "type": "number", "description": "User score", "default": 95.5 },
                            "status": {
                                "type": "string", "description": "User status",
                                "enum": ["active", "inactive", "pending"], "default": "active",
                            },
                            "verified": { "type": "boolean", "description": "Verification status", "default": true },
                        },
                    }),
                )]),
            },
            Flow::ElicitationEnums => match elicited(answers, "enums")? {
                Some(e) => Step::Done(completed(&e)),
                None => ask(vec![elicit(
                    "enums",
                    "Choose from each kind of enum",
                    json!({
                        "type": "object",
                        "properties": {
                            "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                            "titledSingle": { "type": "string", "oneOf": [
                                { "const": "value1", "title": "First Option" },
                                { "const": "value2", "title": "Second Option" },
                                { "const": "value3", "title": "Third Option" },
                            ] },
                            "legacyEnum": {
                                "type": "string", "enum": ["opt1", "opt2", "opt3"],
                                "enumNames": ["Option One", "Option Two", "Option Three"],
                            },
                            "untitledMulti": { "type": "array", "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                            "titledMulti": { "type": "array", "items": { "anyOf": [
                                { "const": "value1", "title": "First Choice" },
                                { "const": "value2", "title": "Second Choice" },
                                { "const": "value3", "title": "Third Choice" },
                            ] } },
                        },
                    }),
                )]),
            },
            Flow::MissingCapability => match sampled(answers, "sampling")? {
                Some(text) => Step::Done(text_result(format!("The model said: {text}"))),
                None => ask(vec![sample("sampling", "Say hello.", 20)]),
            },
            Flow::StreamingElicitation => match elicited(answers, "confirmation")? {
                Some(e) => Step::Done(text_result(format!("Confirmation: {}", e.summary()))),
                None => ask(vec![elicit(
                    "confirmation",
                    "Shall I go on?",
                    json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] }),
                )]),
            },
            Flow::AskName => match elicited(answers, "user_name")? {
                Some(e) => Step::Done(text_result(match e.field("name") {
                    Some(name) if e.accepted() => format!("Hello, {name}!"),
                    _ => format!("No name given ({}).", e.action),
                })),
                None => ask(vec![ask_name("user_name", "What is your name?")]),
            },
            Flow::AskCapital => match sampled(answers, "capital_question")? {
                Some(text) => Step::Done(text_result(text)),
                None => ask(vec![sample(
                    "capital_question",
                    "What is the capital of France?",
                    100,
                )]),
            },
            Flow::AskRoots => match roots(answers, "client_roots")? {
                Some(uris) => Step::Done(text_result(format!("Roots: {}", uris.join(", ")))),
                None => ask(vec![list_roots("client_roots")]),
            },
            Flow::RequestState | Flow::TamperedState => {
                match (state, elicited(answers, "confirm")?) {
                    (Some(s), Some(e)) if s.round == 1 => {
                        let ok = e.content.get("ok").and_then(Value::as_bool);
                        Step::Done(text_result(format!(
                            "state-ok: the request state was the one issued; confirmed: {}",
                            ok.map_or_else(|| e.action.clone(), |b| b.to_string())
                        )))
                    }
                    (None, Some(_)) => {
                        return Err(invalid(
                            "`requestState` is required with the answer to `confirm`",
                        ));
                    }
                    _ => Step::Ask {
                        questions: vec![elicit(
                            "confirm",
                            "Please confirm",
                            json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] }),
                        )],
                        state: Some(State {
                            round: 1,
                            memo: Map::new(),
                        }),
                    },
                }
            }
            Flow::MultipleInputs => {
                let name = elicited(answers, "user_name")?;
                let greeting = sampled(answers, "greeting")?;
                let dirs = roots(answers, "client_roots")?;
                match (state, name, greeting, dirs) {
                    (Some(_), Some(name), Some(greeting), Some(dirs)) => {
                        Step::Done(text_result(format!(
                            "{} — {greeting} — roots: {}",
                            name.field("name").unwrap_or("someone"),
                            dirs.join(", ")
                        )))
                    }
                    _ => Step::Ask {
                        questions: vec![
                            ask_name("user_name", "What is your name?"),
                            sample("greeting", "Generate a greeting", 50),
                            list_roots("client_roots"),
                        ],
                        state: Some(State {
                            round: 1,
                            memo: Map::new(),
                        }),
                    },
                }
            }
            Flow::MultiRound => multi_round(state, answers)?,
            Flow::Capabilities => {
                let mut questions = Vec::new();
                if caps.contains_key("elicitation") && elicited(answers, "user_name")?.is_none() {
                    questions.push(ask_name("user_name", "What is your name?"));
                }
                if caps.contains_key("sampling") && sampled(answers, "capital_question")?.is_none()
                {
                    questions.push(sample(
                        "capital_question",
                        "What is the capital of France?",
                        100,
                    ));
                }
                if caps.contains_key("roots") && roots(answers, "client_roots")?.is_none() {
                    questions.push(list_roots("client_roots"));
                }
                if questions.is_empty() {
                    let got: Vec<&str> = answers.keys().map(String::as_str).collect();
                    Step::Done(text_result(format!(
                        "Asked only through declared capabilities; answers: {}",
                        if got.is_empty() {
                            "none".to_owned()
                        } else {
                            got.join(", ")
                        }
                    )))
                } else {
                    ask(questions)
                }
            }
            Flow::PromptContext => match elicited(answers, "user_context")? {
                Some(e) => {
                    let context = e.field("context").unwrap_or("no context").to_owned();
                    Step::Done(json!({
                        "description": "A prompt built from the user's context",
                        "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Use this context: {context}") } }],
                    }))
                }
                None => ask(vec![elicit(
                    "user_context",
                    "What context should the prompt use?",
                    json!({ "type": "object", "properties": { "context": { "type": "string" } }, "required": ["context"] }),
                )]),
            },
        })
    }
}

fn multi_round(state: Option<&State>, answers: &Answers) -> Result<Step, RpcError> {
    let step1 = || elicit_one("step1", "Step 1: What is your name?", "name");
    let step2 = || elicit_one("step2", "Step 2: What is your favorite color?", "color");
    let Some(state) = state else {
        return Ok(Step::Ask {
            questions: vec![step1()],
            state: Some(State {
                round: 1,
                memo: Map::new(),
            }),
        });
    };
    let again = |question: Question| Step::Ask {
        questions: vec![question],
        state: Some(state.clone()),
    };
    Ok(match state.round {
        1 => match elicited(answers, "step1")? {
            Some(e) => {
                let mut memo = Map::new();
                memo.insert("name".into(), json!(e.field("name").unwrap_or("someone")));
                Step::Ask {
                    questions: vec![step2()],
                    state: Some(State { round: 2, memo }),
                }
            }
            None => again(step1()),
        },
        2 => match elicited(answers, "step2")? {
            Some(e) => {
                let name = state
                    .memo
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("someone");
                let color = e.field("color").unwrap_or("no colour");
                Step::Done(text_result(format!("{name}'s favorite color is {color}.")))
            }
            None => again(step2()),
        },
        other => {
            return Err(invalid(format!(
                "`requestState` names round {other}, which this tool does not have"
            )));
        }
    })
}

/// The client's `inputResponses`: absent is none yet; anything but an object is a fault.
pub fn answers(input_responses: Option<&Value>) -> Result<Answers, RpcError> {
    match input_responses {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(invalid(
            "`inputResponses` must be an object keyed by the input request keys",
        )),
    }
}

/// A question's params as the client sees them: the `inputRequests` entry of 2026-07-28.
pub fn input_requests(questions: &[Question]) -> Value {
    let map: Map<String, Value> = questions
        .iter()
        .map(|q| {
            (
                q.key.to_owned(),
                json!({ "method": q.ask.method(), "params": q.params }),
            )
        })
        .collect();
    Value::Object(map)
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, message)
}

pub fn text_result(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }] })
}

pub fn tool_error(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }], "isError": true })
}

fn completed(e: &Elicited) -> Value {
    text_result(format!("Elicitation completed: {}", e.summary()))
}

fn elicit(key: &'static str, message: &str, schema: Value) -> Question {
    Question {
        key,
        ask: Ask::Elicit,
        params: json!({ "message": message, "requestedSchema": schema }),
    }
}

fn elicit_one(key: &'static str, message: &str, field: &str) -> Question {
    elicit(
        key,
        message,
        json!({ "type": "object", "properties": { field: { "type": "string" } }, "required": [field] }),
    )
}

fn ask_name(key: &'static str, message: &str) -> Question {
    elicit_one(key, message, "name")
}

fn sample(key: &'static str, prompt: &str, max_tokens: u32) -> Question {
    Question {
        key,
        ask: Ask::Sample,
        params: json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
            "maxTokens": max_tokens,
        }),
    }
}

fn list_roots(key: &'static str) -> Question {
    Question {
        key,
        ask: Ask::ListRoots,
        params: json!({}),
    }
}

/// An answer to an elicitation: an `ElicitResult`.
#[derive(Debug)]
struct Elicited {
    action: String,
    content: Map<String, Value>,
}

impl Elicited {
    fn accepted(&self) -> bool {
        self.action == "accept"
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.content.get(name).and_then(Value::as_str)
    }

    fn summary(&self) -> String {
        format!(
            "action={}, content={}",
            self.action,
            Value::Object(self.content.clone())
        )
    }
}

fn elicited(answers: &Answers, key: &str) -> Result<Option<Elicited>, RpcError> {
    let Some(answer) = answers.get(key) else {
        return Ok(None);
    };
    let bad = || {
        invalid(format!(
            "inputResponses.{key} must be an elicitation result: {{\"action\": \"accept\" | \"decline\" | \"cancel\", \"content\"?: {{…}}}}"
        ))
    };
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .filter(|a| ["accept", "decline", "cancel"].contains(a))
        .ok_or_else(bad)?;
    let content = match answer.get("content") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(c)) => c.clone(),
        Some(_) => return Err(bad()),
    };
    Ok(Some(Elicited {
        action: action.to_owned(),
        content,
    }))
}

/// The text of a sampling answer (a `CreateMessageResult`).
fn sampled(answers: &Answers, key: &str) -> Result<Option<String>, RpcError> {
    let Some(answer) = answers.get(key) else {
        return Ok(None);
    };
    let bad = || {
        invalid(format!(
            "inputResponses.{key} must be a sampling result: {{\"role\", \"content\", \"model\"}}"
        ))
    };
    let blocks = match answer.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(block @ Value::Object(_)) => vec![block.clone()],
        _ => return Err(bad()),
    };
    let text: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    Ok(Some(if text.is_empty() {
        "(no text)".to_owned()
    } else {
        text.join("")
    }))
}

/// The URIs of a roots answer (a `ListRootsResult`).
fn roots(answers: &Answers, key: &str) -> Result<Option<Vec<String>>, RpcError> {
    let Some(answer) = answers.get(key) else {
        return Ok(None);
    };
    let list = answer
        .get("roots")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            invalid(format!(
                "inputResponses.{key} must be a roots result: {{\"roots\": [{{\"uri\": …}}]}}"
            ))
        })?;
    Ok(Some(
        list.iter()
            .filter_map(|r| r.get("uri").and_then(Value::as_str).map(str::to_owned))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(content: Value) -> Value {
        json!({ "action": "accept", "content": content })
    }

    fn answers_of(v: Value) -> Answers {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn every_flow_has_a_name_that_finds_it_again() {
        for (name, flow) in TOOL_FLOWS {
            assert_eq!(Flow::tool(name), Some(*flow));
            assert_eq!(flow.name(), *name);
        }
        assert_eq!(
            Flow::prompt("test_input_required_result_prompt"),
            Some(Flow::PromptContext)
        );
        assert_eq!(Flow::tool("test_simple_text"), None);
    }

    #[test]
    fn the_name_flow_re_asks_for_a_missing_answer_and_refuses_a_malformed_one() {
        let caps = Map::new();
        let none = Map::new();
        let first = Flow::AskName.step(&caps, &none, &none, None).unwrap();
        let Step::Ask { questions, state } = first else {
            panic!("expected questions")
        };
        assert_eq!(
            (questions[0].key, questions[0].ask, state),
            ("user_name", Ask::Elicit, None)
        );
        let wrong = answers_of(json!({ "wrong_key": accept(json!({ "data": "x" })) }));
        assert!(matches!(
            Flow::AskName.step(&caps, &none, &wrong, None).unwrap(),
            Step::Ask { .. }
        ));
        let number = answers_of(json!({ "user_name": 12345 }));
        assert!(Flow::AskName.step(&caps, &none, &number, None).is_err());
        let extra = answers_of(json!({
            "user_name": accept(json!({ "name": "Alice" })),
            "unknown_extra_key": { "action": "accept", "content": { "foo": "bar" } },
        }));
        assert_eq!(
            Flow::AskName.step(&caps, &none, &extra, None).unwrap(),
            Step::Done(text_result("Hello, Alice!"))
        );
        assert!(answers(Some(&Value::Null)).is_err());
    }

    #[test]
    fn multi_round_asks_twice_with_a_new_state_then_finishes() {
        let caps = Map::new();
        let none = Map::new();
        let Step::Ask {
            state: Some(s1), ..
        } = Flow::MultiRound.step(&caps, &none, &none, None).unwrap()
        else {
            panic!("round 1")
        };
        let a1 = answers_of(json!({ "step1": accept(json!({ "name": "Alice" })) }));
        let Step::Ask {
            questions,
            state: Some(s2),
        } = Flow::MultiRound.step(&caps, &none, &a1, Some(&s1)).unwrap()
        else {
            panic!("round 2")
        };
        assert_eq!(questions[0].key, "step2");
        assert_ne!(s1, s2);
        let a2 = answers_of(json!({ "step2": accept(json!({ "color": "blue" })) }));
        assert_eq!(
            Flow::MultiRound.step(&caps, &none, &a2, Some(&s2)).unwrap(),
            Step::Done(text_result("Alice's favorite color is blue."))
        );
    }

    #[test]
    fn the_capabilities_flow_asks_only_what_the_client_declared() {
        let caps = answers_of(json!({ "sampling": {} }));
        let none = Map::new();
        let Step::Ask { questions, .. } =
            Flow::Capabilities.step(&caps, &none, &none, None).unwrap()
        else {
            panic!("expected questions")
        };
        let asked: Vec<Ask> = questions.iter().map(|q| q.ask).collect();
        assert_eq!(asked, vec![Ask::Sample]);
    }

    #[test]
    fn the_request_state_flow_needs_its_state_back() {
        let caps = Map::new();
        let none = Map::new();
        let confirm = answers_of(json!({ "confirm": accept(json!({ "ok": true })) }));
        assert!(
            Flow::RequestState
                .step(&caps, &none, &confirm, None)
                .is_err()
        );
        let state = State {
            round: 1,
            memo: Map::new(),
        };
        let Step::Done(done) = Flow::RequestState
            .step(&caps, &none, &confirm, Some(&state))
            .unwrap()
        else {
            panic!("expected a result")
        };
        assert!(
            done["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("state-ok")
        );
    }
}
