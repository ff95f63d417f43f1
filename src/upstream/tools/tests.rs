use super::*;

#[test]
fn wrong_arguments_are_explained() {
    let s = spec("loom_export").unwrap();
    let args: Map<String, Value> = serde_json::from_str(r#"{"reff": "x", "format": 3}"#).unwrap();
    let e = validate(s, &args).unwrap_err();
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
