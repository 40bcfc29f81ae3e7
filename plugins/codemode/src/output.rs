//! What the script prints: kept in memory as its first and last
//! `max_chars` characters (whatever it prints, memory stays bounded), and
//! written through to the component's stdout, which the host keeps, so that
//! a script stopped by a limit still has its output.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::Write;

use monty_types::{MontyException, PrintWriterCallback};

/// The printed text: the start, the end, and how much of the middle was
/// dropped.
#[derive(Debug)]
pub struct Printed {
    max_chars: usize,
    head: String,
    head_chars: usize,
    tail: VecDeque<char>,
    omitted: u64,
}

impl Printed {
    pub fn new(max_chars: usize) -> Self {
        Printed {
            max_chars,
            head: String::new(),
            head_chars: 0,
            tail: VecDeque::new(),
            omitted: 0,
        }
    }

    fn push_str(&mut self, text: &str) {
        let mut stdout = std::io::stdout();
        let _ = stdout.write_all(text.as_bytes());
        for c in text.chars() {
            if self.head_chars < self.max_chars {
                self.head.push(c);
                self.head_chars += 1;
                continue;
            }
            self.tail.push_back(c);
            if self.tail.len() > self.max_chars {
                self.tail.pop_front();
                self.omitted += 1;
            }
        }
    }

    /// The kept text (start then end) and how many characters between them
    /// were dropped.
    pub fn finish(self) -> (String, u64) {
        let _ = std::io::stdout().flush();
        let mut text = self.head;
        text.extend(self.tail);
        (text, self.omitted)
    }
}

impl PrintWriterCallback for Printed {
    fn stdout_write(&mut self, output: Cow<'_, str>) -> Result<(), MontyException> {
        self.push_str(&output);
        Ok(())
    }

    fn stdout_push(&mut self, end: char) -> Result<(), MontyException> {
        let mut buf = [0u8; 4];
        self.push_str(end.encode_utf8(&mut buf));
        Ok(())
    }
}
