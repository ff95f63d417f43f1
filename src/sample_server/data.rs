//! Deterministic, realistic data for the sample server: orders, customers and a service log.
//! The same arguments always give the same bytes, so demos and tests are repeatable.

use serde_json::{Value, json};

/// xorshift64*: small, fast and deterministic; not for anything secret.
pub(crate) struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const FIRST: &[&str] = &[
    "Ana", "Bruno", "Chen", "Dara", "Elif", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kemi",
    "Luca", "Mira", "Noor", "Oskar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Vera",
    "Wen", "Yusuf", "Zoe",
];
const LAST: &[&str] = &[
    "Almeida", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito",
    "Jensen", "Kowalski", "Lopez", "Moreau", "Novak", "Okafor", "Petrov", "Rossi", "Schmidt",
    "Tanaka", "Weber",
];
const COUNTRIES: &[&str] = &["PT", "DE", "FR", "JP", "US", "BR", "IN", "NG", "SE", "PL"];
const TIERS: &[&str] = &["free", "pro", "team", "enterprise"];
const STATUSES: &[&str] = &[
    "pending",
    "paid",
    "shipped",
    "delivered",
    "refunded",
    "cancelled",
];
const CURRENCIES: &[&str] = &["EUR", "USD", "JPY", "BRL"];
const SERVICES: &[&str] = &["api", "billing", "worker", "auth", "search"];
const LEVELS: &[&str] = &["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"];

pub const CUSTOMER_COUNT: u64 = 300;

/// Day 0 of the sample data: 2025-01-01, as days and seconds since the Unix epoch.
const START_DAY: i64 = 20_089;

pub fn date(days: u64) -> String {
    let (y, m, d) = crate::store::civil_from_days(START_DAY + days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

pub fn timestamp(seconds: u64) -> String {
    crate::store::iso(START_DAY as u64 * 86_400 + seconds)
}

pub fn customers(limit: u64) -> Vec<Value> {
    let mut rng = Rng::new(0xC057_0E25);
    (1..=limit.min(CUSTOMER_COUNT))
        .map(|id| {
            let first = rng.pick(FIRST);
            let last = rng.pick(LAST);
            json!({
                "customer_id": id,
                "name": format!("{first} {last}"),
                "email": format!("{}.{}{}@example.com", first.to_lowercase(), last.to_lowercase(), id),
                "country": rng.pick(COUNTRIES),
                "tier": rng.pick(TIERS),
                "signup_date": date(rng.below(600)),
                "lifetime_value": rng.below(500_000) as f64 / 100.0,
            })
        })
        .collect()
}

/// Orders with 19-digit ids (exact only as 64-bit integers) and customer ids that join.
pub fn orders(limit: u64, status: Option<&str>) -> Vec<Value> {
    let mut rng = Rng::new(0x0D0E_5EED);
    let mut out = Vec::new();
    let mut n = 0u64;
    while (out.len() as u64) < limit && n < 1_000_000 {
        n += 1;
        let st = rng.pick(STATUSES);
        let row = json!({
            "order_id": 7_300_000_000_000_000_000u64 + n * 7919,
            "customer_id": 1 + rng.below(CUSTOMER_COUNT),
            "status": st,
            "amount": (500 + rng.below(250_000)) as f64 / 100.0,
            "currency": rng.pick(CURRENCIES),
            "items": 1 + rng.below(9),
            "created_at": timestamp(rng.below(600 * 86_400)),
        });
        if status.is_none_or(|s| s == st) {
            out.push(row);
        }
    }
    out
}

/// The details of the order `id` (as [`orders`] numbers them), or `None` for an id that no
/// order has: the same id always gives the same details.
pub fn order_details(id: u64) -> Option<Value> {
    let base = 7_300_000_000_000_000_000u64;
    let n = id.checked_sub(base)?;
    if n == 0 || n % 7919 != 0 || n / 7919 > 1_000_000 {
        return None;
    }
    let mut rng = Rng::new(id);
    let lines: Vec<Value> = (0..1 + rng.below(4))
        .map(|i| {
            json!({
                "line": i + 1,
                "sku": format!("SKU-{:05}", rng.below(100_000)),
                "quantity": 1 + rng.below(5),
                "unit_price": format!("{}.{:02}", 1 + rng.below(400), rng.below(100)).parse::<serde_json::Number>().unwrap_or_else(|_| 0.into()),
            })
        })
        .collect();
    Some(json!({
        "order_id": id,
        "carrier": rng.pick(&["DHL", "UPS", "FedEx", "La Poste", "Correos"]),
        "tracking": format!("TRK{:010}", rng.below(10_000_000_000)),
        "promised_date": date(200 + rng.below(400)),
        "lines": lines,
    }))
}

/// An order's details in one line of text.
pub fn order_summary(d: &Value) -> String {
    format!(
        "order {} ships with {} ({}), promised {}, {} line(s)",
        d["order_id"],
        d["carrier"].as_str().unwrap_or_default(),
        d["tracking"].as_str().unwrap_or_default(),
        d["promised_date"].as_str().unwrap_or_default(),
        d["lines"].as_array().map_or(0, Vec::len)
    )
}

/// What `write_note` answers: the note's title, its size and a digest of its body, so a caller
/// can check that the body arrived whole.
pub fn note_receipt(title: &str, body: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(body.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "saved note {:?}: {} characters, {} lines, sha256 {hex}",
        title,
        body.chars().count(),
        body.lines().count()
    )
}

pub fn log_lines(lines: u64) -> String {
    let mut rng = Rng::new(0x1065);
    let mut out = String::new();
    let mut t = 40 * 86_400u64;
    for i in 0..lines {
        t += rng.below(5);
        let svc = rng.pick(SERVICES);
        let level = rng.pick(LEVELS);
        let msg = match level {
            "ERROR" => format!(
                "request {} failed: upstream timeout after {}ms (retry {} of 3)",
                10_000 + i,
                1000 + rng.below(4000),
                1 + rng.below(3)
            ),
            "WARN" => format!(
                "slow query on orders: {}ms (threshold 500ms)",
                500 + rng.below(3000)
            ),
            "DEBUG" => format!(
                "cache {} for key customer:{}",
                if rng.below(2) == 0 { "hit" } else { "miss" },
                1 + rng.below(CUSTOMER_COUNT)
            ),
            _ => format!(
                "GET /v1/orders/{} 200 {}ms",
                7_300_000_000_000_000_000u64 + rng.below(50_000) * 7919,
                3 + rng.below(120)
            ),
        };
        out.push_str(&format!("{} {level:<5} [{svc}] {msg}\n", timestamp(t)));
    }
    out
}

/// A large image resource's bytes, base64: not a real picture, but bytes no text reader could
/// take for text (every byte value occurs), in the size of a real chart.
pub fn chart_png() -> String {
    use base64::Engine;
    let mut rng = Rng::new(0xC4A7);
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend((0..48_000).map(|_| rng.below(256) as u8));
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_valid_and_deterministic() {
        assert_eq!(date(0), "2025-01-01");
        assert_eq!(date(59), "2025-03-01");
        assert_eq!(timestamp(86_399), "2025-01-01T23:59:59Z");
        assert_eq!(orders(5, None), orders(5, None));
        assert!(
            orders(50, Some("paid"))
                .iter()
                .all(|o| o["status"] == "paid")
        );
    }
}
