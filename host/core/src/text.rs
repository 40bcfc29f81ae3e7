//! Text helpers shared by the layers.

/// Cuts `s` to at most `max` bytes on a character boundary, and marks the
/// cut with `…` (so the result may be up to 3 bytes longer than `max`).
/// Never panics.
///
/// ```
/// let mut s = String::from("héllo");
/// toolhost_core::text::truncate_utf8(&mut s, 2);
/// assert_eq!(s, "h…");
/// ```
pub fn truncate_utf8(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
}

/// The last `max` bytes of `s` at most, starting on a character boundary
/// (so possibly a little fewer). Never panics.
///
/// ```
/// assert_eq!(toolhost_core::text::tail_utf8("héllo", 4), "llo");
/// assert_eq!(toolhost_core::text::tail_utf8("abc", 10), "abc");
/// ```
pub fn tail_utf8(s: &str, max: usize) -> &str {
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Glob matching with `*` (any run of characters) and `?` (one character),
/// no character classes, in time proportional to the product of the
/// lengths at worst (no backtracking blow-up).
///
/// ```
/// use toolhost_core::text::glob_match;
/// assert!(glob_match("mcp_mail__*", "mcp_mail__send"));
/// assert!(!glob_match("deploy", "deploy2"));
/// ```
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || Some(&c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..).unwrap_or_default().iter().all(|c| *c == '*')
}

/// `time` as RFC 3339 with milliseconds, in UTC (`2026-12-07T03:40:12.345Z`),
/// as the audit log and the console write times.
pub fn rfc3339_millis(time: std::time::SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
