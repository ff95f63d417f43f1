use super::*;
use serde_json::json;

fn rung(text: &str) -> Option<&'static str> {
    find_in_text(text).map(|f| f.rung())
}

fn rows(text: &str) -> Vec<Map<String, Value>> {
    match find_in_text(text) {
        Some(Found::Records(r)) => r.records,
        _ => Vec::new(),
    }
}

#[test]
fn json_rows_at_depth_0_1_2_with_context() {
    let f = find_in_text(
        r#"{"total": 2, "next_cursor": null, "data": {"page": 1, "items": [{"a": 1}, {"a": 2}]}}"#,
    )
    .unwrap();
    assert_eq!(f.rows(), 2);
    assert_eq!(f.context()["total"], 2);
    assert_eq!(f.context()["data.page"], 1);
    assert!(f.context().contains_key("next_cursor"));
    // Two row arrays side by side are ambiguous.
    assert!(find_in_text(r#"{"users": [{"a": 1}], "orders": [{"b": 2}]}"#).is_none());
    // Every element is checked, not only the first.
    assert!(find_in_text(r#"[{"a": 1}, 2, {"a": 3}]"#).is_none());
}

#[test]
fn fenced_json_only_when_it_is_most_of_the_text() {
    let body = (0..20)
        .map(|i| format!("{{\"i\": {i}}}"))
        .collect::<Vec<_>>()
        .join(",");
    assert_eq!(
        rung(&format!("Here:\n```json\n[{body}]\n```\n")),
        Some("json_fenced")
    );
    let prose =
        "This paragraph explains at length what the data means and why it matters. ".repeat(10);
    assert_eq!(
        rung(&format!(
            "{prose}\n```json\n[{{\"i\":1}},{{\"i\":2}}]\n```\n"
        )),
        None
    );
}

#[test]
fn structured_content_and_blocks() {
    let s = json!({ "rows": [{ "x": 1 }, { "x": 2 }], "count": 2 });
    let f = find_rows(Some(&s), &["ignored"]).unwrap();
    assert_eq!(f.rung(), "structuredContent");
    assert_eq!(f.context()["count"], 2);
    let f = find_rows(None, &[r#"{"a":1}"#, r#"{"a":2,"b":3}"#]).unwrap();
    assert_eq!(f.rung(), "json_blocks");
    assert!(find_rows(None, &[r#"{"a":1}"#, "not json"]).is_none());
}

#[test]
fn ndjson_every_line() {
    assert_eq!(rung("{\"a\":1}\n{\"a\":2}\n\n{\"a\":3}\n"), Some("ndjson"));
    assert_eq!(rung("{\"a\":1}\n{\"a\":2}\noops\n"), None);
}

#[test]
fn csv_with_quotes_is_parsed_not_refused() {
    let text = "id,name,note\n1,\"Smith, Jane\",\"said \"\"hi\"\"\"\n2,Bob,\"multi\nline\"\n";
    let r = rows(text);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["name"], "Smith, Jane");
    assert_eq!(r[0]["note"], "said \"hi\"");
    assert_eq!(r[1]["note"], "multi\nline");
    assert_eq!(rung("a\tb\n1\t2\n3\t4\n"), Some("tsv"));
    // Ragged rows are not a table.
    assert_eq!(rung("a,b\n1,2\n3\n"), None);
    // Prose with commas is not CSV.
    assert_eq!(
        rung("Well, this is prose.\nIt has commas, here and there.\nAnd more, again.\n"),
        None
    );
}

#[test]
fn markdown_tables_but_not_a_stray_pipe() {
    let t = "Results:\n\n| name | size |\n|------|-----:|\n| a.txt | 10 |\n| b \\| c | 20 |\n";
    let r = rows(t);
    assert_eq!(r.len(), 2);
    assert_eq!(r[1]["name"], "b | c");
    assert_eq!(
        rung("Use a | b to pipe output.\nThen read the result.\nAnd | again.\n"),
        None
    );
    // No delimiter row: not a table.
    assert_eq!(rung("| a | b |\n| 1 | 2 |\n| 3 | 4 |\n"), None);
}

#[test]
fn gfm_tables_with_alignment_escapes_and_no_outer_pipes() {
    let body: String = (0..30)
        .map(|i| format!("| item {i} | {i}.5 | a \\| b |\n"))
        .collect();
    for delim in [
        "|:---|---:|:-:|",
        "| :-- | --: | :---: |",
        "|-|-|-|",
        "| --- | ---: | :- |",
    ] {
        let t = format!(
            "Top items this week\n\n| name | score | note |\n{delim}\n{body}\nShowing 30 of 120.\n"
        );
        let f = find_in_text(&t).unwrap_or_else(|| panic!("{delim}: parked"));
        assert_eq!(f.rung(), "markdown");
        assert_eq!(f.rows(), 30);
        assert_eq!(f.context()["text_before"], "Top items this week");
        assert_eq!(f.context()["text_after"], "Showing 30 of 120.");
        let r = rows(&t);
        assert_eq!(r[3]["name"], "item 3");
        assert_eq!(r[3]["note"], "a | b");
    }
    // No leading or trailing pipes, and a title line that has a pipe of its own.
    let bare: String = (0..10).map(|i| format!("{i} | n{i} \\| x\n")).collect();
    let t = format!("Report | March\nid | name\n:-- | --:\n{bare}");
    let r = rows(&t);
    assert_eq!(r.len(), 10, "{t}");
    assert_eq!(r[2]["id"], "2");
    assert_eq!(r[2]["name"], "n2 | x");
    // A row with a different number of cells is no table.
    assert_eq!(
        rung("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 | 5 |\n"),
        None
    );
    // Not a delimiter row: colons alone, or other characters.
    assert_eq!(rung("| a | b |\n|:|:|\n| 1 | 2 |\n| 3 | 4 |\n"), None);
    assert_eq!(rung("| a | b |\n|-x-|---|\n| 1 | 2 |\n| 3 | 4 |\n"), None);
    // A table lost in prose is not a table.
    let prose = "This paragraph explains the numbers below at length. ".repeat(20);
    assert_eq!(
        rung(&format!(
            "{prose}\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
        )),
        None
    );
}

#[test]
fn record_blocks_with_several_pairs_on_a_line() {
    let hits: String = (1..=12)
        .map(|i| format!("{i}. Title: Story number {i} | with a pipe\n   Points: {} | Comments: {}\n   URL: https://example.com/{i}\n", i * 10, i * 3))
        .collect();
    let f = find_in_text(&hits).expect("records");
    assert_eq!(f.rung(), "records");
    let r = rows(&hits);
    assert_eq!(r.len(), 12);
    assert_eq!(r[1]["Points"], "20");
    assert_eq!(r[1]["Comments"], "6");
    // `| with a pipe` is no pair, so the title keeps its separator.
    assert_eq!(r[1]["Title"], "Story number 2 | with a pipe");
    assert_eq!(r[1]["URL"], "https://example.com/2");
    let blank = "Name: web · Port: 80\nStatus: up\n\nName: db · Port: 5432\nStatus: down\n";
    assert_eq!(rows(blank)[1]["Port"], "5432");
    // Blocks that disagree (one reads as two pairs, another as one) pass through.
    let disagree = "Name: a | Port: 1\nStatus: up\n\nName: b | port one\nStatus: up\n";
    assert_eq!(rung(disagree), None);
    let disagree = "Name: a | Port: 1\n\nName: b | Owner: me\n";
    assert_eq!(rung(disagree), None);
}

#[test]
fn record_blocks() {
    let t = "Name: web\nStatus: running\n\nName: db\nStatus: stopped\n";
    assert_eq!(rows(t).len(), 2);
    let n = "1. Name: web\n   Port: 80\n2. Name: db\n   Port: 5432\n";
    assert_eq!(rung(n), Some("records"));
    // A numbered list that skips numbers is not records.
    assert_eq!(
        rung("1. Name: web\n   Port: 80\n3. Name: db\n   Port: 5432\n"),
        None
    );
    // Key sets must agree.
    assert_eq!(
        rung("Name: web\nStatus: running\n\nName: db\nOwner: me\n"),
        None
    );
}

#[test]
fn fixed_width_and_tags() {
    let docker = "CONTAINER ID   IMAGE          STATUS         PORTS     NAMES\n\
                  f2a1b3c4d5e6   nginx:1.27     Up 2 hours     80/tcp    web\n\
                  0a9b8c7d6e5f   postgres:16    Up 3 hours               db\n";
    let r = rows(docker);
    assert_eq!(r.len(), 2, "{docker:?}");
    assert_eq!(r[0]["CONTAINER ID"], "f2a1b3c4d5e6");
    assert_eq!(r[0]["STATUS"], "Up 2 hours");
    assert_eq!(r[1]["PORTS"], "");
    assert_eq!(r[1]["NAMES"], "db");
    let ps = "    PID TTY          TIME CMD\n   4242 pts/0    00:00:01 bash\n   4301 pts/0    00:00:00 ps -ef --forest\n";
    let r = rows(ps);
    assert_eq!(r.len(), 2);
    assert_eq!(r[1]["PID"], "4301");
    assert_eq!(r[1]["CMD"], "ps -ef --forest");
    let listing = "[DIR] src\n[FILE] Cargo.toml\n[FILE] README.md\n";
    let r = rows(listing);
    assert_eq!(r[1]["type"], "FILE");
    assert_eq!(r[1]["name"], "Cargo.toml");
    assert_eq!(rung("[DIR] src\nsomething else\n"), None);
}

#[test]
fn plain_prose_and_logs_are_not_tables() {
    let log = "2025-01-01T00:00:00Z INFO [api] GET /v1/orders 200 3ms\n2025-01-01T00:00:01Z WARN [db] slow query\n2025-01-01T00:00:02Z INFO [api] GET /v1/users 200 5ms\n";
    assert_eq!(rung(log), None);
    assert_eq!(
        rung("Just a sentence.\nAnother one here.\nAnd a third.\n"),
        None
    );
}

/// A fixture of real command output, saved from a Debian machine.
fn shape(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/shapes/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn ps_with_a_spaced_date_is_parked_not_misread() {
    // `ps -eo pid,user,lstart,rss,args`: STARTED (`Mon Dec  7 11:18:04 2026`) overflows left
    // of its right-aligned header into the gap after the left-aligned USER. Either could own
    // `Mon Dec  7`, so it is no table (it was read as STARTED=`Mon`, RSS=`Dec`).
    let text = shape("ps_lstart.txt");
    assert_eq!(rung(&text), None, "{:?}", rows(&text).first());
    // With every user four letters long the same holds.
    let uniform: String = text
        .lines()
        .map(|l| l.replacen("systemd+", "root    ", 1))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(rung(&uniform), None);
}

/// `ps aux`'s first ten fields hold no spaces; COMMAND is the rest of the line as written.
fn ps_aux_expected(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .map(|l| {
            let mut cells = Vec::new();
            let mut rest = l;
            for _ in 0..10 {
                let t = rest.trim_start();
                let end = t.find(' ').unwrap_or(t.len());
                cells.push(t[..end].to_owned());
                rest = &t[end..];
            }
            cells.push(rest.trim_start().to_owned());
            cells
        })
        .collect()
}

#[test]
fn ps_aux_is_read_by_its_edges_exactly() {
    let mut text = shape("ps_aux.txt");
    // A process title with a trailing space keeps it (postgres sets such titles).
    text.push_str("postgres   812  0.0  0.1 215000  9120 ?        Ss   11:20   0:00 postgres: checkpointer \n");
    let r = rows(&text);
    let expected = ps_aux_expected(&text);
    assert_eq!(rung(&text), Some("fixed_width"));
    assert_eq!(r.len(), expected.len());
    let names = [
        "USER", "PID", "%CPU", "%MEM", "VSZ", "RSS", "TTY", "STAT", "START", "TIME", "COMMAND",
    ];
    for (row, want) in r.iter().zip(&expected) {
        let got: Vec<&str> = names.iter().map(|n| row[*n].as_str().unwrap()).collect();
        assert_eq!(got, *want);
    }
    assert_eq!(
        r.last().unwrap()["COMMAND"],
        "postgres: checkpointer ",
        "the last column keeps its trailing space"
    );
}

#[test]
fn overflow_goes_where_the_evidence_puts_it() {
    // STATUS is left-aligned (its cells start at its header, and end in different places), so
    // `ago` after CREATED's header is CREATED's.
    let docker = "CONTAINER ID   CREATED      STATUS         NAMES\n\
                  f2a1b3c4d5e6   2 hours ago  Up 2 hours     web\n\
                  0a9b8c7d6e5f   3 days ago   Exited (0) 1m  db\n";
    let r = rows(docker);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["CREATED"], "2 hours ago");
    assert_eq!(r[1]["STATUS"], "Exited (0) 1m");
    // A right-aligned SIZE whose numbers overflow left of it, after an empty-or-short NAME.
    let sizes = "NAME        SIZE  KIND\n\
                 a        1234567  file\n\
                 bb            12  dir\n\
                 ccc          123  file\n";
    let r = rows(sizes);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0]["SIZE"], "1234567");
    assert_eq!(r[0]["NAME"], "a");
    // A value over two header words is no table.
    assert_eq!(rung("NAME  SIZE\nabcdefghij 1\nb     2\nc     3\n"), None);
    // Inner spacing is kept as written.
    let spaced = "NAME           WHEN\nalpha  Dec  7 10:00\nbeta   Dec 17 10:00\n";
    assert_eq!(
        rung(spaced),
        None,
        "WHEN overflows after a left-aligned NAME: ambiguous"
    );
    // The same overflow after a column proven right-aligned is the next column's, and inner
    // spacing is kept as written.
    let spaced = "   N          WHEN\n   1  Dec  7 10:00\n  22  Dec 17 10:00\n";
    let r = rows(spaced);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["WHEN"], "Dec  7 10:00");
    assert_eq!(r[1]["N"], "22");
}

#[test]
fn headerless_tsv_keeps_every_line() {
    for (file, first) in [
        ("dpkg_query.tsv", ["adduser", "3.134"]),
        ("du_ak.tsv", ["12", "/usr/share/doc/libelf1/copyright"]),
    ] {
        let text = shape(file);
        let f = find_in_text(&text).unwrap();
        assert_eq!(f.rung(), "tsv");
        assert_eq!(
            f.rows(),
            text.lines().count(),
            "{file}: every line is a row"
        );
        assert!(f.context()["header"].as_str().unwrap().starts_with("none"));
        let r = rows(&text);
        assert_eq!(r[0]["column_1"], first[0], "{file}");
        assert_eq!(r[0]["column_2"], first[1], "{file}");
        for (row, line) in r.iter().zip(text.lines()) {
            let (a, b) = line.split_once('\t').unwrap();
            assert_eq!(
                (row["column_1"].as_str(), row["column_2"].as_str()),
                (Some(a), Some(b))
            );
        }
    }
    // A header that names columns is still a header.
    let r = rows("package\tversion\nadduser\t3.134\nbash\t5.2\n");
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["package"], "adduser");
    // A first line repeated below in its column is data, not names.
    let r = rows("root,bin\nroot,sbin\nuser,lib\n");
    assert_eq!(r.len(), 0, "comma text with no value column stays text");
    let r = rows("a\tb\na\tc\nd\te\n");
    assert_eq!(r.len(), 3);
    // Prose with commas is not a headerless table.
    assert_eq!(
        rung(
            "Well, I said to him that we should go\nThis is prose, really\nNothing here, to see\n"
        ),
        None
    );
}

#[test]
fn a_note_above_a_csv_is_context() {
    let text = "[Reading 4 lines from start (total: 4 lines, 0 remaining)]\nid,name,amount\n1,Ann,2.50\n2,Bob,3.00\n3,Cy,4.25\n";
    let f = find_in_text(text).unwrap();
    assert_eq!(f.rung(), "csv");
    assert_eq!(f.rows(), 3);
    assert_eq!(
        f.context()["text_before"],
        "[Reading 4 lines from start (total: 4 lines, 0 remaining)]"
    );
    // A first line of the table's own width is not a note: the table reads as it is.
    let r = rows("x,y,z\nid,name,amount\n1,Ann,2.50\n2,Bob,3.00\n");
    assert_eq!(r.len(), 3);
    assert_eq!(r[0]["x"], "id");
}

#[test]
fn dpkg_l_is_read_by_its_ruler() {
    let text = shape("dpkg_l.txt");
    let f = find_in_text(&text).unwrap();
    assert_eq!(f.rung(), "ruled");
    assert_eq!(f.rows(), text.lines().count() - 5);
    assert!(
        f.context()["text_before"]
            .as_str()
            .unwrap()
            .starts_with("Desired=")
    );
    let r = rows(&text);
    assert_eq!(r[0]["column_1"], "ii");
    assert_eq!(r[0]["Name"], "adduser");
    assert_eq!(r[0]["Version"], "3.134");
    assert_eq!(r[0]["Architecture"], "all");
    assert_eq!(r[0]["Description"], "add and remove users and groups");
    // A value that runs into the ruler's gap is no table.
    let broken = text.replacen(
        "ii  adduser ",
        "ii  adduserXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        1,
    );
    assert_ne!(rung(&broken), Some("ruled"));
}

#[test]
fn ls_l_is_a_long_listing() {
    for file in ["ls_l.txt", "ls_dev.txt"] {
        let text = shape(file);
        let f = find_in_text(&text).unwrap();
        assert_eq!(f.rung(), "long_listing", "{file}");
        assert_eq!(f.rows(), text.lines().count() - 1, "{file}");
        assert!(
            f.context()["text_before"]
                .as_str()
                .unwrap()
                .starts_with("total ")
        );
        for (row, line) in rows(&text).iter().zip(text.lines().skip(1)) {
            let name = row["name"].as_str().unwrap();
            let shown = match row.get("target").and_then(Value::as_str) {
                Some(t) if !t.is_empty() => format!(" {name} -> {t}"),
                _ => format!(" {name}"),
            };
            assert!(line.ends_with(&shown), "{line:?} vs {shown:?}");
            assert!(line.starts_with(row["mode"].as_str().unwrap()));
        }
    }
    let r = rows(&shape("ls_l.txt"));
    assert_eq!(r[0]["name"], "FileCheck-14");
    assert_eq!(r[0]["target"], "../lib/llvm-14/bin/FileCheck");
    assert_eq!(r[0]["modified"], "Feb 17  2023");
    // A link whose name holds the arrow twice cannot be split.
    let odd =
        "total 0\nlrwxrwxrwx 1 a a 1 Feb 17  2023 x -> y -> z\n-rw-r--r-- 1 a a 1 Feb 17  2023 w\n";
    assert_eq!(rung(odd), None);
}

#[test]
fn markdown_cells_read_as_the_text_they_show() {
    let text = "| product\\_name | sku | note |\n|---|---|---|\n\
                | USB\\_C cable | SKU\\_00001 | \\*\\*bold\\*\\* lamp |\n\
                | back\\slash hook | `a\\_b` | AT&amp;T &#x1F600; &#65; &bogus; |\n\
                | pipe \\| inside | ``code ` tick`` | 2\\*4 lumber |\n";
    let r = rows(text);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0]["product_name"], "USB_C cable");
    assert_eq!(r[0]["sku"], "SKU_00001");
    assert_eq!(r[0]["note"], "**bold** lamp");
    // A backslash before a letter is no escape; inside a code span none is.
    assert_eq!(r[1]["product_name"], "back\\slash hook");
    assert_eq!(r[1]["sku"], "a\\_b");
    assert_eq!(r[1]["note"], "AT&T 😀 A &bogus;");
    assert_eq!(r[2]["product_name"], "pipe | inside");
    assert_eq!(r[2]["sku"], "code ` tick");
    assert_eq!(r[2]["note"], "2*4 lumber");
    // An escaped backslash before a pipe leaves the pipe a cell edge.
    let r = rows("| a | b |\n|---|---|\n| x\\\\ | y |\n| p | q |\n");
    assert_eq!(r[0]["a"], "x\\");
    assert_eq!(r[0]["b"], "y");
}

#[test]
fn a_grid_of_values_is_a_table() {
    // excel-mcp-server's `read_range` (the Google Sheets shape): the first row names columns.
    let text = r#"{"range": "A1:C4", "sheet": "orders", "values": [["order_id", "amount", "note"], [7000000000000000001, 12.5, "a"], [7000000000000000002, null, "b"], [7000000000000000003, 3, ""]]}"#;
    let f = find_in_text(text).unwrap();
    assert_eq!(f.rows(), 3);
    assert_eq!(f.context()["range"], "A1:C4");
    let t = f.into_table().unwrap();
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["order_id", "amount", "note"]);
    assert_eq!(t.columns[0].ty.sql(), "BIGINT");
    // A first row of values is data: every row is kept.
    let text = r#"[[1, "a"], [2, "b"], [3, "c"]]"#;
    let f = find_in_text(text).unwrap();
    assert_eq!(f.rows(), 3);
    assert!(f.context()["header"].as_str().unwrap().starts_with("none"));
    // Rows of different lengths, or a nested cell, are no grid.
    assert!(find_in_text(r#"{"values": [["a", "b"], [1, 2], [3]]}"#).is_none());
    assert!(find_in_text(r#"{"values": [["a", "b"], [1, [2]], [3, 4]]}"#).is_none());
}

#[test]
fn a_workbook_in_markdown_is_a_table_per_sheet() {
    let sheet = |name: &str, rows: usize| {
        let mut s = format!("## {name}\n| id | value\\_x |\n| --- | --- |\n");
        for i in 0..rows {
            s.push_str(&format!("| {i} | v{i} |\n"));
        }
        s
    };
    let text = format!("{}\n{}", sheet("orders", 5), sheet("customers", 3));
    let found = multi::tables(None, &[&text]).expect("two sheets");
    let shape: Vec<(&str, usize)> = found
        .iter()
        .map(|t| (t.name.as_str(), t.table.rows()))
        .collect();
    assert_eq!(shape, [("orders", 5), ("customers", 3)]);
    assert_eq!(found[0].table.columns[1].name, "value_x");
    // Text between the sheets would be lost: no tables then.
    let prose = format!(
        "{}\nSome words here.\n{}",
        sheet("orders", 5),
        sheet("customers", 3)
    );
    assert!(multi::tables(None, &[&prose]).is_none());
    // One sheet is the single-table rung's.
    assert!(multi::tables(None, &[&sheet("orders", 5)]).is_none());
}
