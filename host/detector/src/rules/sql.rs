//! SQL and datastore clients: SQL given with `-c`/`-e`/operands or fed on
//! standard input is tokenized (strings and comments are data) and each
//! statement judged. Client shell escapes (`\!`, `.shell`) are shell code.

use super::langs::by_name;
use super::shell::Sink;
use super::{Cmd, args};
use crate::analyze::{Analyzer, Input};
use crate::expand::Field;
use crate::payload::Payload;
use crate::verdict::Category;

impl Analyzer {
    /// `psql`, `mysql`, `sqlite3`, `redis-cli`, `mongosh`, ...
    pub(crate) fn sql_client(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let a = c.args();
        let mut sql: Vec<String> = Vec::new();
        match name {
            "psql" | "pgcli" | "usql" => {
                let p = args::parse(
                    a,
                    "cdfhpUvPFRTLo",
                    &[
                        "--command",
                        "--dbname",
                        "--file",
                        "--host",
                        "--port",
                        "--username",
                    ],
                );
                sql.extend(p.values_of(&["c", "--command"]).map(str::to_string));
                let files: Vec<Field> = p.values_of(&["f", "--file"]).map(Field::lit).collect();
                for f in &files {
                    if f.text != "-" {
                        self.run_file(f, Sink::Sql, c.raw(), &[]);
                    }
                }
                if sql.is_empty() && files.iter().all(|f| f.text == "-") {
                    self.sql_stdin(c);
                }
            }
            "mysql" | "mariadb" | "mycli" | "cockroach" => {
                let p = args::parse(
                    a,
                    "eDhPuSp",
                    &["--execute", "--database", "--host", "--port", "--user"],
                );
                sql.extend(p.values_of(&["e", "--execute"]).map(str::to_string));
                if sql.is_empty() {
                    self.sql_stdin(c);
                }
            }
            "sqlite3" | "sqlite" | "litecli" | "duckdb" => {
                let mut ops = Vec::new();
                let mut i = 0;
                while let Some(f) = a.get(i) {
                    let t = f.text.as_str();
                    if matches!(t, "-cmd" | "-c" | "-s") {
                        sql.extend(a.get(i + 1).map(|f| f.text.clone()));
                        i += 2;
                    } else if matches!(
                        t,
                        "-init"
                            | "-separator"
                            | "-newline"
                            | "-nullvalue"
                            | "-vfs"
                            | "-maxsize"
                            | "-mmap"
                            | "-lookaside"
                            | "-pagecache"
                    ) {
                        i += 2;
                    } else if t.starts_with('-') {
                        i += 1;
                    } else {
                        ops.push(f.text.clone());
                        i += 1;
                    }
                }
                sql.extend(ops.into_iter().skip(1));
                if sql.is_empty() {
                    self.sql_stdin(c);
                }
            }
            "clickhouse-client" | "clickhouse" | "sqlcmd" | "cqlsh" => {
                let p = args::parse(a, "qQedhuUPS", &["--query", "--execute"]);
                sql.extend(
                    p.values_of(&["q", "Q", "e", "--query", "--execute"])
                        .map(str::to_string),
                );
                if sql.is_empty() {
                    self.sql_stdin(c);
                }
            }
            "mongo" | "mongosh" => {
                let p = args::parse(
                    a,
                    "uph",
                    &["--eval", "--host", "--port", "--username", "--password"],
                );
                for js in p.values_of(&["--eval"]) {
                    self.mongo(js, c);
                }
                if let Some(t) = c.stdin_payload().and_then(|p| p.text.clone()) {
                    self.mongo(&t, c);
                }
            }
            _ => {
                let p = args::parse(
                    a,
                    "hpanusrid",
                    &[
                        "--user", "--pass", "--tls", "--cacert", "--cert", "--key", "--sni",
                    ],
                );
                let words = p.texts().join(" ");
                let stdin = c.stdin_payload().and_then(|p| p.text.clone()).unwrap_or_default();
                let lines = std::iter::once(words.as_str()).chain(stdin.lines());
                if let Some(reason) = lines.filter_map(key_value_destructive).next() {
                    self.add(Category::SqlDestructive, c.raw(), reason);
                }
            }
        }
        for s in sql {
            let p = Payload {
                text: Some(s),
                ..Payload::default()
            };
            self.run_code(&p, Sink::Sql, c, "SQL");
        }
    }

    fn sql_stdin(&mut self, c: &Cmd<'_>) {
        if let Some(p) = c.stdin_payload() {
            let p = p.clone();
            self.run_code(&p, Sink::Sql, c, "SQL on standard input");
        } else if let Input::File(w) = c.stdin {
            let w = w.clone();
            if let Some(f) = self.expand(&w).first() {
                self.run_file(f, Sink::Sql, c.raw(), &[]);
            }
        }
    }

    fn mongo(&mut self, js: &str, c: &Cmd<'_>) {
        let compact: String = js.chars().filter(|c| !c.is_whitespace()).collect();
        let hits = [
            "dropDatabase(",
            ".drop(",
            "deleteMany({})",
            "remove({})",
            "dropAllUsers(",
        ];
        if hits.iter().any(|h| compact.contains(h)) {
            self.add(Category::SqlDestructive, c.raw(), "drops or empties MongoDB data");
        }
        self.inline_code(by_name("node"), js, c.raw());
    }

    /// Judges SQL text given to a client.
    pub(crate) fn sql_text(&mut self, text: &str, raw: &str) {
        for line in text.lines() {
            let l = line.trim_start();
            let shell = l
                .strip_prefix("\\!")
                .or_else(|| l.strip_prefix(".shell "))
                .or_else(|| l.strip_prefix(".system "))
                .or_else(|| l.strip_prefix("system "));
            if let Some(cmd) = shell {
                self.add(
                    Category::CodeExecution,
                    raw,
                    "the SQL client runs a shell command",
                );
                self.payload(cmd, Input::None);
            }
        }
        for stmt in statements(text) {
            if let Some(reason) = destructive(&stmt.words) {
                self.add(Category::SqlDestructive, &stmt.text, reason);
            }
            if stmt.words.iter().any(|w| w == "PROGRAM" || w == "XP_CMDSHELL") {
                self.add(
                    Category::CodeExecution,
                    &stmt.text,
                    "the SQL statement runs a program on the server",
                );
            }
        }
    }
}

/// Why a key-value store command (Redis, Valkey, KeyDB) destroys data,
/// if it does: erasing every key, deleting keys, flushing scripts or
/// functions.
fn key_value_destructive(line: &str) -> Option<&'static str> {
    let mut words = line.split_whitespace().map(str::to_ascii_uppercase);
    let first = words.next()?;
    match first.as_str() {
        "FLUSHALL" | "FLUSHDB" => Some("erases every key of the datastore"),
        "DEL" | "UNLINK" | "GETDEL" => Some("deletes keys of the datastore"),
        "SCRIPT" | "FUNCTION" if words.next().is_some_and(|w| w == "FLUSH") => {
            Some("deletes the datastore's stored scripts or functions")
        }
        _ => None,
    }
}

/// One statement: its source text and its upper-cased keywords and names.
#[derive(Debug, Default)]
struct Stmt {
    text: String,
    words: Vec<String>,
}

/// Splits SQL into statements; strings, quoted names and comments are
/// skipped (replaced by `'`), `$$` bodies included.
fn statements(sql: &str) -> Vec<Stmt> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut cur = Stmt::default();
    let mut word = String::new();
    let mut i = 0;
    let flush = |word: &mut String, cur: &mut Stmt| {
        if !word.is_empty() {
            cur.words.push(std::mem::take(word).to_uppercase());
        }
    };
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            cur.text.push(c);
            i += 1;
            continue;
        }
        flush(&mut word, &mut cur);
        match c {
            '\'' | '"' | '`' => {
                let mut j = i + 1;
                while let Some(&d) = chars.get(j) {
                    if d == c && chars.get(j + 1) != Some(&c) {
                        break;
                    }
                    j += if d == c { 2 } else { 1 };
                }
                cur.text.extend(
                    chars
                        .get(i..=j.min(chars.len().saturating_sub(1)))
                        .unwrap_or_default(),
                );
                cur.words.push("'".to_string());
                i = j + 1;
            }
            '-' if next == Some('-') => {
                while chars.get(i).is_some_and(|&d| d != '\n') {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                i += 2;
                while i < chars.len() && !(chars.get(i) == Some(&'*') && chars.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                i += 2;
            }
            ';' => {
                out.push(std::mem::take(&mut cur));
                i += 1;
            }
            _ => {
                if !c.is_whitespace() {
                    cur.words.push(c.to_string());
                }
                cur.text.push(c);
                i += 1;
            }
        }
    }
    flush(&mut word, &mut cur);
    out.push(cur);
    out.retain(|s| !s.words.is_empty());
    out
}

/// Why a statement destroys data, if it does.
fn destructive(words: &[String]) -> Option<&'static str> {
    let first = words.iter().position(|w| w != "(")?;
    let head = words.get(first).map(String::as_str)?;
    let has = |k: &str| words.iter().any(|w| w == k);
    let after = |k: &str| words.iter().position(|w| w == k);
    match head {
        "DROP" => return Some("drops a database object"),
        "TRUNCATE" => return Some("empties a table"),
        "ALTER" if has("DROP") => return Some("drops part of a table"),
        _ => {}
    }
    for verb in ["DELETE", "UPDATE"] {
        let Some(v) = after(verb) else { continue };
        if verb == "UPDATE" && !has("SET") {
            continue;
        }
        let where_at = words.iter().skip(v).position(|w| w == "WHERE").map(|p| p + v);
        match where_at {
            None => {
                return Some(if verb == "DELETE" {
                    "deletes every row of a table (no WHERE clause)"
                } else {
                    "updates every row of a table (no WHERE clause)"
                });
            }
            Some(w) => {
                let cond: Vec<&str> = words.iter().skip(w + 1).take(3).map(String::as_str).collect();
                let always = matches!(cond.as_slice(), ["TRUE", ..] | ["1", "=", "1"] | ["'", "=", "'"]);
                if always {
                    return Some("deletes or updates every row (the WHERE clause is always true)");
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(sql: &str) -> Vec<&'static str> {
        statements(sql)
            .iter()
            .filter_map(|s| destructive(&s.words))
            .collect()
    }

    #[test]
    fn statements_are_judged() {
        assert_eq!(judge("DROP TABLE users;").len(), 1);
        assert_eq!(judge("delete from users").len(), 1);
        assert!(judge("DELETE FROM s WHERE expires < 17;").is_empty());
        assert!(judge("SELECT 'DROP TABLE x' FROM t -- drop table y").is_empty());
        assert_eq!(judge("select 1; truncate payments").len(), 1);
        assert_eq!(judge("DELETE FROM t WHERE 1=1").len(), 1);
        assert!(judge("SHOW TABLES").is_empty());
    }
}
