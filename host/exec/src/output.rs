//! Output capture with a cap: the head and the tail are kept, the middle
//! is replaced by a marker saying how many bytes were cut.

use std::collections::VecDeque;

/// The marker put where output was cut.
pub fn cut_marker(bytes: u64) -> String {
    format!("\n[... {bytes} bytes cut ...]\n")
}

/// A byte stream's first and last bytes, up to `cap` bytes in all.
#[derive(Debug, Clone)]
pub(crate) struct Capped {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capped {
    pub fn new(cap: usize) -> Capped {
        Capped {
            cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let head_cap = self.cap / 2;
        if self.head.len() < head_cap {
            let n = (head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(bytes.get(..n).unwrap_or_default());
            bytes = bytes.get(n..).unwrap_or_default();
        }
        let tail_cap = self.cap - head_cap;
        if bytes.len() >= tail_cap {
            self.tail.clear();
            self.tail
                .extend(bytes.get(bytes.len() - tail_cap..).unwrap_or_default());
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(tail_cap);
            self.tail.drain(..overflow.min(self.tail.len()));
            self.tail.extend(bytes);
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The text kept within `limit` bytes (at most the capture cap), and
    /// whether anything was cut.
    pub fn finish(&self, limit: usize) -> (String, bool) {
        let limit = limit.min(self.cap);
        let kept = self.head.len() + self.tail.len();
        if self.total as usize <= limit && self.total as usize == kept {
            let mut all = self.head.clone();
            all.extend(self.tail.iter());
            return (String::from_utf8_lossy(&all).into_owned(), false);
        }
        let h = (limit / 2).min(self.head.len());
        let t = (limit - h).min(self.tail.len());
        let head = self.head.get(..h).unwrap_or_default();
        let tail: Vec<u8> = self.tail.iter().skip(self.tail.len() - t).copied().collect();
        let cut = self.total.saturating_sub((h + t) as u64);
        let mut out = String::from_utf8_lossy(head).into_owned();
        out.push_str(&cut_marker(cut));
        out.push_str(&String::from_utf8_lossy(&tail));
        (out, true)
    }
}

/// Cuts two streams to a combined `cap`: standard error keeps up to half
/// when both do not fit. Returns (stdout, stderr, truncated).
pub(crate) fn combine(out: &Capped, err: &Capped, cap: usize) -> (String, String, bool) {
    let (o, e) = (out.total() as usize, err.total() as usize);
    let (lo, le) = if o.saturating_add(e) <= cap {
        (o, e)
    } else {
        let (po, pe) = (o.min(cap / 2), e.min(cap / 2));
        let lo = po + (o - po).min(cap - po - pe);
        let le = pe + (e - pe).min(cap - lo - pe);
        (lo, le)
    };
    let (so, to) = out.finish(lo);
    let (se, te) = err.finish(le);
    (so, se, to || te)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail() {
        let mut c = Capped::new(10);
        for chunk in [b"0123".as_slice(), b"456789", b"abcdefghij"] {
            c.push(chunk);
        }
        let (s, cut) = c.finish(10);
        assert!(cut);
        assert_eq!(s, format!("01234{}fghij", cut_marker(10)));
        let mut small = Capped::new(10);
        small.push(b"abc");
        assert_eq!(small.finish(10), ("abc".to_string(), false));
    }
}
