//! Option parsing for the rules: GNU-style, options anywhere before `--`.

use crate::expand::Field;

/// A command line split into options and operands.
#[derive(Debug, Default)]
pub(crate) struct Args<'a> {
    /// Every short option letter seen.
    pub shorts: String,
    /// Every long option (`--name`, without any `=value`).
    pub longs: Vec<String>,
    /// Option values: (`x` or `--name`, value).
    pub values: Vec<(String, String)>,
    /// Operands in order.
    pub operands: Vec<&'a Field>,
}

impl Args<'_> {
    /// Whether any of the short option `letters` was given.
    pub fn short(&self, letters: &str) -> bool {
        self.shorts.chars().any(|c| letters.contains(c))
    }

    /// Whether a long option starting with `prefix` was given.
    pub fn long(&self, prefix: &str) -> bool {
        self.longs.iter().any(|l| l.starts_with(prefix))
    }

    /// The first value given for any of `keys`.
    pub fn value(&self, keys: &[&str]) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| v.as_str())
    }

    /// Every value given for any of `keys`.
    pub fn values_of<'s>(&'s self, keys: &'s [&'s str]) -> impl Iterator<Item = &'s str> + 's {
        self.values
            .iter()
            .filter(move |(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| v.as_str())
    }

    /// The operand texts.
    pub fn texts(&self) -> Vec<&str> {
        self.operands.iter().map(|f| f.text.as_str()).collect()
    }

    /// Whether any operand equals one of `words` (case-insensitive).
    pub fn operand_in(&self, words: &[&str]) -> bool {
        self.operands
            .iter()
            .any(|f| words.iter().any(|w| f.text.eq_ignore_ascii_case(w)))
    }
}

/// Parses `args`; short options in `with_arg` and long options in
/// `long_with_arg` take a value (attached or the next argument).
pub(crate) fn parse<'a>(args: &'a [Field], with_arg: &str, long_with_arg: &[&str]) -> Args<'a> {
    let mut out = Args::default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        if t == "--" {
            out.operands.extend(args.get(i..).unwrap_or_default());
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, val) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (t.to_string(), None),
            };
            let val = match val {
                Some(v) => Some(v),
                None if long_with_arg.contains(&name.as_str()) => {
                    i += 1;
                    args.get(i - 1).map(|f| f.text.clone())
                }
                None => None,
            };
            if let Some(v) = val {
                out.values.push((name.clone(), v));
            }
            out.longs.push(name);
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            let chars: Vec<char> = t.chars().skip(1).collect();
            for (k, c) in chars.iter().enumerate() {
                out.shorts.push(*c);
                if with_arg.contains(*c) {
                    let attached: String = chars.get(k + 1..).unwrap_or_default().iter().collect();
                    let v = if attached.is_empty() {
                        i += 1;
                        args.get(i - 1).map(|f| f.text.clone()).unwrap_or_default()
                    } else {
                        attached
                    };
                    out.values.push((c.to_string(), v));
                    break;
                }
            }
            continue;
        }
        out.operands.push(a);
    }
    out
}
