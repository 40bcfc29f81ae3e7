//! HTML as compact semantic text: headings, paragraphs, lists, links,
//! forms, inputs and tables are kept; classes, styles and scripts dropped.
//!
//! `<h2>News</h2><p>See <a href="/x">this</a></p>` renders as
//! `## News\n\nSee [this](/x)`.

use scraper::node::Node;
use scraper::{ElementRef, Html};

/// Deeper than this, nesting is flattened (a hostile page cannot make the
/// renderer recurse without bound).
const MAX_DEPTH: usize = 200;

/// Whether a response with this content type (and body) is HTML.
pub fn is_html(content_type: Option<&str>, body: &str) -> bool {
    match content_type {
        Some(ct) => {
            let ct = ct.to_ascii_lowercase();
            ct.contains("text/html") || ct.contains("application/xhtml")
        }
        None => body
            .trim_start()
            .get(..15)
            .is_some_and(|s| s.eq_ignore_ascii_case("<!doctype html>")),
    }
}

/// Renders an HTML document as text.
pub fn render(html: &str) -> String {
    let doc = Html::parse_document(html);
    let mut out = Out::default();
    if let Some(title) = doc
        .root_element()
        .descendants()
        .filter_map(ElementRef::wrap)
        .find(|e| e.value().name() == "title")
    {
        let t = collapse(&title.text().collect::<String>());
        if !t.is_empty() {
            out.text.push_str(&format!("Title: {t}\n\n"));
        }
    }
    walk(doc.root_element(), &mut out, 0);
    out.text.trim().to_string()
}

#[derive(Default)]
struct Out {
    text: String,
}

impl Out {
    /// Ends the current line and leaves a blank line (at most one).
    fn block(&mut self) {
        let trimmed = self.text.trim_end_matches(' ').len();
        self.text.truncate(trimmed);
        if self.text.is_empty() || self.text.ends_with("\n\n") {
            return;
        }
        self.text
            .push_str(if self.text.ends_with('\n') { "\n" } else { "\n\n" });
    }

    fn line(&mut self) {
        let trimmed = self.text.trim_end_matches(' ').len();
        self.text.truncate(trimmed);
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }

    fn words(&mut self, s: &str) {
        let c = collapse(s);
        if c.is_empty() {
            if s.chars().any(char::is_whitespace)
                && !self.text.ends_with([' ', '\n'])
                && !self.text.is_empty()
            {
                self.text.push(' ');
            }
            return;
        }
        if s.starts_with(char::is_whitespace)
            && !self.text.ends_with([' ', '\n', '(', '['])
            && !self.text.is_empty()
        {
            self.text.push(' ');
        }
        self.text.push_str(&c);
        if s.ends_with(char::is_whitespace) {
            self.text.push(' ');
        }
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn inline_text(e: ElementRef<'_>) -> String {
    collapse(&e.text().collect::<String>())
}

fn walk(e: ElementRef<'_>, out: &mut Out, depth: usize) {
    for child in e.children() {
        match child.value() {
            Node::Text(t) => out.words(t),
            Node::Element(_) => {
                if let Some(el) = ElementRef::wrap(child) {
                    element(el, out, depth + 1);
                }
            }
            _ => {}
        }
    }
}

fn element(e: ElementRef<'_>, out: &mut Out, depth: usize) {
    let name = e.value().name();
    let attr = |a: &str| e.value().attr(a).map(collapse).filter(|v| !v.is_empty());
    if depth > MAX_DEPTH {
        out.words(&inline_text(e));
        return;
    }
    match name {
        "script" | "style" | "noscript" | "template" | "svg" | "head" | "iframe" | "canvas" => {}
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            out.block();
            let level = name[1..].parse::<usize>().unwrap_or(1);
            out.text.push_str(&"#".repeat(level));
            out.text.push(' ');
            out.text.push_str(&inline_text(e));
            out.block();
        }
        "a" => {
            let text = inline_text(e);
            match attr("href") {
                Some(href) if !href.starts_with("javascript:") => {
                    out.words(" ");
                    out.text.push_str(&format!("[{text}]({href})"));
                }
                _ => out.words(&text),
            }
        }
        "img" => {
            if let Some(alt) = attr("alt") {
                out.words(" ");
                out.text.push_str(&format!("[image: {alt}]"));
            }
        }
        "br" => out.line(),
        "hr" => {
            out.block();
            out.text.push_str("---");
            out.block();
        }
        "li" => {
            out.line();
            out.text.push_str("- ");
            walk(e, out, depth);
            out.line();
        }
        "tr" => {
            out.line();
            let cells: Vec<String> = e
                .children()
                .filter_map(ElementRef::wrap)
                .filter(|c| matches!(c.value().name(), "td" | "th"))
                .map(inline_text)
                .collect();
            out.text.push_str(&format!("| {} |", cells.join(" | ")));
            out.line();
        }
        "form" => {
            out.block();
            let method = attr("method").unwrap_or_else(|| "get".into());
            let action = attr("action").unwrap_or_default();
            out.text
                .push_str(&format!("[form {} {action}]", method.to_ascii_uppercase()));
            out.line();
            walk(e, out, depth);
            out.line();
            out.text.push_str("[/form]");
            out.block();
        }
        "input" | "textarea" | "select" => {
            let mut parts = vec![name.to_string()];
            if name == "input" {
                parts.push(format!("type={}", attr("type").unwrap_or_else(|| "text".into())));
            }
            for a in ["name", "value", "placeholder"] {
                if let Some(v) = attr(a) {
                    parts.push(format!("{a}={v:?}"));
                }
            }
            if name == "select" {
                let options: Vec<String> = e
                    .descendants()
                    .filter_map(ElementRef::wrap)
                    .filter(|o| o.value().name() == "option")
                    .map(inline_text)
                    .collect();
                parts.push(format!("options=[{}]", options.join(", ")));
            } else if name == "textarea" {
                let t = inline_text(e);
                if !t.is_empty() {
                    parts.push(format!("text={t:?}"));
                }
            }
            out.words(" ");
            out.text.push_str(&format!("[{}]", parts.join(" ")));
            out.words(" ");
        }
        "button" => {
            out.words(" ");
            out.text.push_str(&format!("[button: {}]", inline_text(e)));
            out.words(" ");
        }
        "pre" => {
            out.block();
            out.text.push_str(e.text().collect::<String>().trim_end());
            out.block();
        }
        "p" | "div" | "section" | "article" | "header" | "footer" | "main" | "nav" | "aside" | "ul"
        | "ol" | "table" | "blockquote" | "dl" | "dt" | "dd" | "figure" | "figcaption" | "fieldset"
        | "body" => {
            out.block();
            walk(e, out, depth);
            out.block();
        }
        _ => walk(e, out, depth),
    }
}
