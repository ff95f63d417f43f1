//! A server's stderr on its way to the log and the workbench, with one echo of loom's own
//! doing collapsed: a server on the Python SDK 1.x validates every request against its union
//! of known methods, so loom's `server/discover` probe (how a 2026-07-28 server is told from
//! a legacy one) fails every member and the server writes the whole pydantic report, ~12 KB
//! (`Failed to validate request: 31 validation errors for ClientRequest`, then three lines an
//! error), before answering with an error, which is how loom learns it is legacy. No probe
//! avoids that: the union rejects any method it does not name. The report's first line stays,
//! with why; its detail is left out, once per process and only when it names
//! `server/discover`. Every other line passes as written, in order; nothing else is judged.

/// The most lines held while deciding whether a report is the probe's echo.
const HOLD: usize = 4;

#[derive(Debug, Default)]
pub struct ProbeEcho {
    held: Vec<String>,
    state: State,
}

#[derive(Debug, Default, PartialEq)]
enum State {
    #[default]
    Passing,
    /// A validation report began; held until a line says what it was about.
    Held,
    /// The probe's report: its detail lines are left out.
    Swallowing,
    /// The echo was collapsed once; every line passes from now on.
    Done,
}

/// A line of a pydantic validation report after its first: indented, or the location of
/// an error (`PingRequest.method`, `InitializeRequest.params`).
fn is_detail(line: &str) -> bool {
    line.starts_with(char::is_whitespace)
        || (line.contains("Request")
            && !line.is_empty()
            && line
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_'))
}

impl ProbeEcho {
    /// One line from the server's stderr; the lines to pass on now, in order.
    pub fn push(&mut self, line: String) -> Vec<String> {
        match self.state {
            State::Passing
                if line.starts_with("Failed to validate request:")
                    && line.contains("ClientRequest") =>
            {
                self.held.push(line);
                self.state = State::Held;
                Vec::new()
            }
            State::Passing | State::Done => vec![line],
            State::Held => {
                if line.contains("'server/discover'") {
                    self.state = State::Swallowing;
                    let first = std::mem::take(&mut self.held).swap_remove(0);
                    return vec![format!(
                        "{first} (the MCP Python SDK 1.x's answer to loom's server/discover probe: a legacy server; its detail is left out)"
                    )];
                }
                if is_detail(&line) && self.held.len() < HOLD {
                    self.held.push(line);
                    return Vec::new();
                }
                self.state = State::Passing;
                let mut out = std::mem::take(&mut self.held);
                out.extend(self.push(line));
                out
            }
            State::Swallowing if is_detail(&line) => Vec::new(),
            State::Swallowing => {
                self.state = State::Done;
                vec![line]
            }
        }
    }

    /// The lines still held when the stream ends.
    pub fn finish(&mut self) -> Vec<String> {
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<String> {
        let mut echo = ProbeEcho::default();
        let mut out: Vec<String> = lines
            .iter()
            .flat_map(|l| echo.push((*l).to_owned()))
            .collect();
        out.extend(echo.finish());
        out
    }

    const PROBE_REPORT: &[&str] = &[
        "Failed to validate request: 2 validation errors for ClientRequest",
        "PingRequest.method",
        "  Input should be 'ping' [type=literal_error, input_value='server/discover', input_type=str]",
        "    For further information visit https://errors.pydantic.dev/2.14/v/literal_error",
        "InitializeRequest.params",
        "  Field required [type=missing, input_value={'method': 'server/discov...sonrpc': '2.0', 'id': 1}, input_type=dict]",
        "    For further information visit https://errors.pydantic.dev/2.14/v/missing",
    ];

    #[test]
    fn the_probes_report_is_one_line_and_what_follows_passes() {
        let mut lines = vec!["INFO starting"];
        lines.extend(PROBE_REPORT);
        lines.extend([
            "Processing request of type ListToolsRequest",
            "  indented later",
        ]);
        let out = run(&lines);
        assert_eq!(out.len(), 4, "{out:#?}");
        assert_eq!(out[0], "INFO starting");
        assert!(
            out[1]
                .starts_with("Failed to validate request: 2 validation errors for ClientRequest (")
                && out[1].contains("server/discover probe"),
            "{}",
            out[1]
        );
        assert_eq!(out[2], "Processing request of type ListToolsRequest");
        // Once collapsed, nothing more is: a later report is the server's own news.
        assert_eq!(out[3], "  indented later");
        let again: Vec<&str> = PROBE_REPORT.iter().chain(PROBE_REPORT).copied().collect();
        assert_eq!(run(&again).len(), 1 + PROBE_REPORT.len());
    }

    #[test]
    fn any_other_validation_report_passes_whole() {
        let report = [
            "Failed to validate request: 1 validation error for ClientRequest",
            "CallToolRequest.params.name",
            "  Field required [type=missing, input_value={'arguments': {}}, input_type=dict]",
            "Traceback (most recent call last):",
        ];
        assert_eq!(run(&report), report);
        // Held lines are not lost when the stream ends.
        assert_eq!(run(&report[..2]), &report[..2]);
    }

    proptest::proptest! {
        #[test]
        fn no_line_is_lost_but_the_probes_detail(
            lines in proptest::collection::vec(
                "Failed to validate request: 3 validation errors for ClientRequest|PingRequest\\.method|  input_value='server/discover'|  x|\\PC{0,20}",
                0..30,
            ),
        ) {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            let out = run(&refs);
            proptest::prop_assert!(out.len() <= lines.len());
            let collapsed = out.iter().any(|l| l.contains("server/discover probe"));
            if !collapsed {
                proptest::prop_assert_eq!(out, lines);
            } else {
                // Every line that is not a report's detail passes, in order.
                let kept: Vec<&String> = lines.iter().filter(|l| !is_detail(l) && !l.starts_with("Failed to validate")).collect();
                let passed: Vec<&String> = out.iter().filter(|l| !is_detail(l) && !l.starts_with("Failed to validate")).collect();
                proptest::prop_assert_eq!(kept, passed);
            }
        }
    }
}
