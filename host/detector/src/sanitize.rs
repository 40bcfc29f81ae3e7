//! Readings of a command before parsing: terminal escapes and invisible
//! characters removed, Unicode compatibility forms folded (NFKC), and
//! look-alike letters and dashes from other scripts folded to the ASCII
//! they imitate.
//!
//! Normalizing can *change* what a shell would see: NFKC turns a fullwidth
//! apostrophe `＇` into a real quote, and removing an escape sequence can
//! remove a `|` that bash would have seen. So the detector never analyses
//! only the normalized text; it analyses every reading returned by
//! [`readings`] and unions the findings, which can only add matches.

use unicode_normalization::UnicodeNormalization;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';

/// The distinct readings of `command` to analyse: as given, with escapes and
/// invisible characters stripped, stripped then NFKC-normalized, and that
/// with look-alike letters and dashes folded to the ASCII they imitate
/// (`rm −rf /`, `rм -rf /`, `ѕudo`).
pub(crate) fn readings(command: &str) -> Vec<String> {
    let stripped = strip_controls(command);
    let normalized: String = stripped.nfkc().collect();
    let folded = fold_confusables(&normalized);
    let mut out = vec![command.to_string()];
    for v in [stripped, normalized, folded] {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The ASCII character a letter, dash or slash of another script imitates
/// (after NFKC, which already folds fullwidth and mathematical forms):
/// Cyrillic and Greek letters shaped like Latin ones, dashes and minus
/// signs, division and fraction slashes. Accented Latin letters (`é`,
/// `ï`) are not look-alikes: they are text.
fn confusable(c: char) -> Option<char> {
    let ascii = match c {
        '\u{2010}'..='\u{2015}'
        | '\u{2212}'
        | '\u{2043}'
        | '\u{02d7}'
        | '\u{2796}'
        | '\u{fe58}'
        | '\u{fe63}' => '-',
        '\u{2215}' | '\u{2044}' | '\u{29f8}' => '/',
        // Cyrillic.
        'а' => 'a',
        'в' => 'b',
        'г' => 'r',
        'е' | 'ё' => 'e',
        'һ' => 'h',
        'і' | 'ї' => 'i',
        'ј' => 'j',
        'к' => 'k',
        'ӏ' => 'l',
        'м' => 'm',
        'п' => 'n',
        'о' => 'o',
        'р' => 'p',
        'ԛ' => 'q',
        'с' => 'c',
        'ѕ' => 's',
        'т' => 't',
        'у' => 'y',
        'ԝ' => 'w',
        'х' => 'x',
        'ԁ' => 'd',
        'ь' => 'b',
        'А' => 'A',
        'В' => 'B',
        'Е' => 'E',
        'Н' => 'H',
        'І' => 'I',
        'Ј' => 'J',
        'К' => 'K',
        'М' => 'M',
        'О' => 'O',
        'Р' => 'P',
        'С' => 'C',
        'Ѕ' => 'S',
        'Т' => 'T',
        'Х' => 'X',
        'Ү' => 'Y',
        // Greek.
        'α' => 'a',
        'ε' => 'e',
        'ι' => 'i',
        'κ' => 'k',
        'ν' => 'v',
        'ο' => 'o',
        'ρ' => 'p',
        'τ' => 't',
        'υ' => 'u',
        'χ' => 'x',
        'Α' => 'A',
        'Β' => 'B',
        'Ε' => 'E',
        'Ζ' => 'Z',
        'Η' => 'H',
        'Ι' => 'I',
        'Κ' => 'K',
        'Μ' => 'M',
        'Ν' => 'N',
        'Ο' => 'O',
        'Ρ' => 'P',
        'Τ' => 'T',
        'Υ' => 'Y',
        'Χ' => 'X',
        // Latin letters without their dot or with another shape.
        'ı' => 'i',
        'ȷ' => 'j',
        'ɑ' => 'a',
        'ɡ' => 'g',
        'ǀ' => 'l',
        // Armenian.
        'օ' => 'o',
        'ս' => 'u',
        _ => return None,
    };
    Some(ascii)
}

/// `text` with every look-alike character (see [`confusable`]) replaced
/// by the ASCII it imitates.
pub(crate) fn fold_confusables(text: &str) -> String {
    text.chars().map(|c| confusable(c).unwrap_or(c)).collect()
}

/// The ASCII name a program word imitates, when it is spelled with
/// look-alike or compatibility characters (`ѕudo`, `rм`, `ｒｍ`): such a
/// word names a different program than it appears to. `None` for ASCII
/// words and for words with real non-ASCII letters (`naïve`).
pub(crate) fn imitated(word: &str) -> Option<String> {
    if word.is_ascii() {
        return None;
    }
    let nfkc: String = word.nfkc().collect();
    let folded = fold_confusables(&nfkc);
    (folded.is_ascii() && folded != word).then_some(folded)
}

/// Removes ANSI/VT escape sequences (CSI, OSC, DCS and friends, both the
/// 7-bit `ESC` forms and the 8-bit C1 forms), C0/C1 control characters other
/// than tab and newline, and invisible Unicode format characters (zero-width
/// spaces and joiners, bidirectional overrides, soft hyphens, BOM). Line and
/// paragraph separators become newlines.
pub(crate) fn strip_controls(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ESC => match chars.peek().copied() {
                Some('[') => {
                    chars.next();
                    skip_csi(&mut chars);
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    skip_string(&mut chars);
                }
                Some(n) if ('\u{20}'..='\u{2f}').contains(&n) => {
                    while chars.peek().is_some_and(|n| ('\u{20}'..='\u{2f}').contains(n)) {
                        chars.next();
                    }
                    chars.next();
                }
                Some(n) if ('\u{30}'..='\u{7e}').contains(&n) => {
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\u{2028}' | '\u{2029}' => out.push('\n'),
            '\t' | '\n' => out.push(c),
            c if is_invisible(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Skips the rest of a control sequence introduced by CSI: parameter bytes,
/// intermediate bytes and one final byte.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&n) = chars.peek() {
        if ('\u{20}'..='\u{3f}').contains(&n) {
            chars.next();
        } else {
            if ('\u{40}'..='\u{7e}').contains(&n) {
                chars.next();
            }
            return;
        }
    }
}

/// Skips a control string (OSC, DCS, ...) up to and including its
/// terminator: BEL, `ESC \` or the 8-bit ST.
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(n) = chars.next() {
        match n {
            BEL | '\u{9c}' => return,
            ESC => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}

/// Whether `c` is a control or invisible formatting character that a
/// terminal would not show as text.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}'
        | '\u{b}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{ad}'
        | '\u{61c}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_csi_osc_and_invisible() {
        let s = "r\u{1b}[31mm\u{1b}[0m -rf\u{200b} /\u{1b}]0;title\u{7}";
        assert_eq!(strip_controls(s), "rm -rf /");
    }

    #[test]
    fn readings_include_nfkc() {
        let r = readings("ｒｍ -rf /");
        assert!(r.iter().any(|v| v == "rm -rf /"));
        assert_eq!(r[0], "ｒｍ -rf /");
    }

    #[test]
    fn look_alikes_are_folded() {
        let r = readings("rм −rf /");
        assert!(r.iter().any(|v| v == "rm -rf /"));
        assert_eq!(readings("echo 'café'").len(), 1);
        assert_eq!(imitated("ѕudo").as_deref(), Some("sudo"));
        assert_eq!(imitated("ｒｍ").as_deref(), Some("rm"));
        assert_eq!(imitated("naïve"), None);
        assert_eq!(imitated("rm"), None);
    }

    #[test]
    fn unterminated_sequences_do_not_panic() {
        for s in ["\u{1b}", "\u{1b}[", "\u{1b}]abc", "\u{9b}12", "a\u{1b}P"] {
            let _ = readings(s);
        }
    }
}
