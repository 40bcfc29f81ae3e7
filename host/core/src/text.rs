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
