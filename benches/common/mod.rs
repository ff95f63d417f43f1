//! What more than one bench needs.

pub mod peer;

/// The resident memory of process `pid`, in KiB (`VmRSS`), or 0 when it cannot be read.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// `text`'s length in o200k tokens (the tokenizer the tests count with).
#[allow(dead_code)] // not every bench counts tokens
pub fn tokens(text: &str) -> usize {
    static BPE: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().expect("o200k"))
        .encode_ordinary(text)
        .len()
}
