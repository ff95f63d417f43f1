use super::*;

#[test]
fn wrong_arguments_are_explained() {
    let s = spec("loom_export").unwrap();
    let args: Map<String, Value> = serde_json::from_str(r#"{"reff": "x", "format": 3}"#).unwrap();
    let wrong = validate(s, &args).unwrap_err();
    // What is wrong is data, and the text the model reads says the same.
    assert_eq!(
        wrong.problems,
        vec![
            ArgumentProblem::Missing {
                name: "ref",
                about: "the dataset's ref"
            },
            ArgumentProblem::WrongType {
                name: "format",
                kind: Kind::Str,
                got: serde_json::json!(3)
            },
            ArgumentProblem::Unknown {
                name: "reff".into(),
                near: Some("ref")
            },
        ]
    );
    let e = wrong.to_string();
    assert!(e.contains("`ref` is required"), "{e}");
    assert!(e.contains("`format` must be a non-empty string"), "{e}");
    assert!(
        e.contains("unknown argument `reff`; did you mean `ref`?"),
        "{e}"
    );
    assert!(
        e.contains("required: ref, format; optional: filename"),
        "{e}"
    );
    assert!(e.contains(r#"example: loom_export {"ref""#), "{e}");
    let ok: Map<String, Value> = serde_json::from_str(r#"{"ref": "x", "format": "csv"}"#).unwrap();
    assert!(validate(s, &ok).is_ok());
}

#[test]
fn every_tool_has_one_spec() {
    assert_eq!(TOOLS.len(), LoomTool::ALL.len());
    for tool in LoomTool::ALL {
        let specs: Vec<_> = TOOLS.iter().filter(|s| s.tool == tool).collect();
        assert_eq!(specs.len(), 1, "{} has {} specs", tool.name(), specs.len());
        assert_eq!(spec(tool.name()).map(|s| s.tool), Some(tool));
    }
}

#[test]
fn definitions_are_rmcp_tools_with_loom_annotations() {
    let t = tool(spec("loom_export").unwrap());
    assert_eq!(t.name, "loom_export");
    let a = t.annotations.as_ref().unwrap();
    assert_eq!(
        (a.read_only_hint, a.destructive_hint, a.open_world_hint),
        (Some(false), Some(false), Some(false))
    );
    // The JSON keeps the order the listing always had (and its token counts).
    let v = definition(spec("loom_describe").unwrap());
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["name", "title", "description", "inputSchema", "annotations"]
    );
    assert_eq!(
        v["inputSchema"],
        serde_json::json!({
            "type": "object",
            "properties": { "ref": { "type": "string", "description": "the dataset's ref" } },
            "additionalProperties": false,
            "required": ["ref"],
        })
    );
    assert_eq!(
        v["annotations"].to_string(),
        r#"{"readOnlyHint":true,"destructiveHint":false,"openWorldHint":false}"#
    );
}
