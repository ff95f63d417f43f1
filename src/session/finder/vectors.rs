//! Meaning for `loom_find_tools`: static word-piece vectors distilled from the
//! all-MiniLM-L6-v2 sentence encoder (`assets/finder/`, made by `scripts/distill_vectors.py`),
//! so that "put report.pdf into the archive folder" lands near `move_file` although the two
//! share no word. A text's vector is the sum of its word pieces' vectors (each already scaled
//! by how much a piece of its frequency should count), normalised; two texts compare by
//! cosine. The word pieces come from our own BERT-style tokenizer over `text::words` (so
//! identifiers split as the lexical index splits them): lowercase, accents folded, greedy
//! longest-match-first against the model's vocabulary with `##` continuations, and a word that
//! does not split into known pieces is left out, as BERT's `[UNK]` would carry no meaning.
//! The asset is compiled in and parsed once, on first use; a malformed asset disables the
//! vectors instead of failing a search. Nothing here may panic on any text.

use super::text;
use std::collections::HashMap;
use std::sync::OnceLock;

static VOCAB: &str = include_str!("../../../assets/finder/vocab.txt");
static VECTORS: &[u8] = include_bytes!("../../../assets/finder/vectors.bin");

const MAGIC: &[u8; 8] = b"LOOMVEC1";
/// Most word pieces read from one text: a tool's description past this adds little meaning,
/// and a hostile query cannot make a search slow.
pub(super) const MAX_PIECES: usize = 512;

/// The parsed asset: the vocabulary split into word-initial and continuation pieces, and one
/// int8 row with its scale per vocabulary line.
struct Table {
    initial: HashMap<&'static str, u32>,
    continuation: HashMap<&'static str, u32>,
    dims: usize,
    /// Per row: a little-endian f32 scale, then `dims` signed bytes.
    rows: &'static [u8],
}

impl Table {
    fn parse(vocab: &'static str, bytes: &'static [u8]) -> Option<Table> {
        let header = bytes.get(..16)?;
        if &header[..8] != MAGIC {
            return None;
        }
        let word = |i: usize| -> Option<usize> {
            let b: [u8; 4] = header.get(i..i + 4)?.try_into().ok()?;
            usize::try_from(u32::from_le_bytes(b)).ok()
        };
        let (count, dims) = (word(8)?, word(12)?);
        let rows = bytes.get(16..)?;
        if dims == 0 || rows.len() != count.checked_mul(dims.checked_add(4)?)? {
            return None;
        }
        let (mut initial, mut continuation) = (HashMap::new(), HashMap::new());
        let mut lines = 0usize;
        for (id, piece) in vocab.lines().enumerate() {
            lines += 1;
            let id = u32::try_from(id).ok()?;
            match piece.strip_prefix("##") {
                Some(rest) if !rest.is_empty() => continuation.insert(rest, id),
                _ => initial.insert(piece, id),
            };
        }
        (lines == count).then_some(Table {
            initial,
            continuation,
            dims,
            rows,
        })
    }

    /// Adds row `id`'s vector to `sum`.
    fn add_row(&self, id: u32, sum: &mut [f32]) {
        let stride = self.dims + 4;
        let Some(row) = usize::try_from(id)
            .ok()
            .and_then(|i| self.rows.get(i * stride..(i + 1) * stride))
        else {
            return;
        };
        let scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
        for (s, &q) in sum.iter_mut().zip(&row[4..]) {
            *s += scale * f32::from(q as i8);
        }
    }

    /// Calls `each` with the vocabulary ids of `word`'s pieces, or not at all when the word
    /// does not split into known pieces.
    fn pieces(&self, word: &str, pieces: &mut Vec<u32>) {
        pieces.clear();
        // Every piece of the vocabulary kept is ASCII, so a word with anything else is unknown,
        // and byte offsets within an ASCII word are character boundaries.
        if !word.is_ascii() {
            return;
        }
        let mut start = 0;
        while start < word.len() {
            let map = if start == 0 {
                &self.initial
            } else {
                &self.continuation
            };
            let found = (start + 1..=word.len()).rev().find_map(|end| {
                word.get(start..end)
                    .and_then(|p| map.get(p))
                    .map(|&id| (end, id))
            });
            match found {
                Some((end, id)) => {
                    pieces.push(id);
                    start = end;
                }
                None => {
                    pieces.clear();
                    return;
                }
            }
        }
    }
}

fn table() -> Option<&'static Table> {
    static TABLE: OnceLock<Option<Table>> = OnceLock::new();
    TABLE.get_or_init(|| Table::parse(VOCAB, VECTORS)).as_ref()
}

/// Folds the accented Latin letters a lowercased word may hold to their base letter, as
/// BERT's uncased tokenizer strips accents.
fn fold(c: char) -> char {
    match c {
        'à'..='å' | 'ā' | 'ă' | 'ą' => 'a',
        'ç' | 'ć' | 'č' => 'c',
        'è'..='ë' | 'ē' | 'ė' | 'ę' | 'ě' => 'e',
        'ì'..='ï' | 'ī' | 'į' => 'i',
        'ñ' | 'ń' | 'ň' => 'n',
        'ò'..='ö' | 'ō' | 'ő' => 'o',
        'ù'..='ü' | 'ū' | 'ů' | 'ű' => 'u',
        'ý' | 'ÿ' => 'y',
        'ś' | 'š' => 's',
        'ź' | 'ż' | 'ž' => 'z',
        'ř' => 'r',
        'ł' => 'l',
        c => c,
    }
}

fn walk(t: &Table, text: &str, mut each: impl FnMut(u32)) {
    let (mut left, mut folded, mut pieces) = (MAX_PIECES, String::new(), Vec::new());
    text::words(text, |w| {
        if left == 0 {
            return;
        }
        folded.clear();
        folded.extend(w.chars().map(fold));
        t.pieces(&folded, &mut pieces);
        for &id in pieces.iter().take(left) {
            each(id);
        }
        left = left.saturating_sub(pieces.len());
    });
}

/// The vector of `text`, unit length, or `None` when the asset is unusable or no word of
/// the text is known.
pub(super) fn embed(text: &str) -> Option<Vec<f32>> {
    let t = table()?;
    let mut sum = vec![0f32; t.dims];
    walk(t, text, |id| t.add_row(id, &mut sum));
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(norm.is_finite() && norm > 0.0) {
        return None;
    }
    sum.iter_mut().for_each(|x| *x /= norm);
    Some(sum)
}

/// The dot product, which is the cosine of two vectors from `embed`, summed in eight lanes so
/// that the compiler can use vector instructions (a single running sum waits on each addition,
/// and a find makes one dot product per tool).
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (xs, ys) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = (xs.remainder().iter())
        .zip(ys.remainder())
        .map(|(x, y)| x * y)
        .sum();
    let mut lanes = [0f32; 8];
    for (x, y) in xs.zip(ys) {
        for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += x * y;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_dot_product_in_lanes_is_the_plain_one(
            pairs in proptest::collection::vec((-1.0f32..1.0, -1.0f32..1.0), 0..300)
        ) {
            let (a, b): (Vec<f32>, Vec<f32>) = pairs.into_iter().unzip();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            prop_assert!((dot(&a, &b) - plain).abs() <= 1e-4 * (1.0 + a.len() as f32));
        }
    }

    /// The word pieces of `text`, as vocabulary strings.
    fn pieces(text: &str) -> Vec<&'static str> {
        let t = table().expect("the compiled-in asset parses");
        let lines: Vec<&str> = VOCAB.lines().collect();
        let mut out = Vec::new();
        walk(t, text, |id| out.push(lines[id as usize]));
        out
    }

    #[test]
    fn words_split_into_the_models_pieces() {
        assert_eq!(pieces("unaffable"), ["una", "##ffa", "##ble"]);
        assert_eq!(pieces("Read the FILE"), ["read", "the", "file"]);
        // Identifiers split as the lexical index splits them; accents fold.
        assert_eq!(pieces("createIssue café"), ["create", "issue", "cafe"]);
        // A word with no known pieces carries no meaning.
        assert!(pieces("日本語").is_empty());
        assert_eq!(pieces(&"ab ".repeat(2 * MAX_PIECES)).len(), MAX_PIECES);
    }

    #[test]
    fn close_meanings_have_close_vectors() {
        let v = |s: &str| embed(s).expect("known words");
        let folder = v("remove a folder from disk");
        assert!(dot(&folder, &v("delete a directory")) > dot(&folder, &v("send a chat message")));
        assert!((dot(&folder, &folder) - 1.0).abs() < 1e-4);
        assert!(embed("").is_none() && embed("§§ ¶").is_none());
    }

    proptest! {
        #[test]
        fn any_text_embeds_without_panic_to_a_finite_unit_vector(text in any::<String>()) {
            if let Some(v) = embed(&text) {
                prop_assert!(v.iter().all(|x| x.is_finite()));
                prop_assert!((dot(&v, &v) - 1.0).abs() < 1e-3);
            }
        }
    }
}
