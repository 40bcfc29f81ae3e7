//! JUnit XML, the report format CI systems render (GitHub Actions through
//! test-report actions, GitLab's `artifacts:reports:junit`): one
//! `<testsuite>` per component, one `<testcase>` per check, with a
//! `<failure>` (each problem and its fix) or a `<skipped>` (why).

use std::io;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use crate::report::{Report, Status};

/// The reports as one JUnit XML document (UTF-8, XML 1.0). Characters XML
/// 1.0 cannot carry (control characters such as NUL) are written as
/// `\u{..}` escapes.
pub fn junit_xml(reports: &[Report]) -> String {
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing to a Vec cannot fail.
    let _ = write(&mut writer, reports);
    String::from_utf8(writer.into_inner()).unwrap_or_default()
}

fn write(writer: &mut Writer<Vec<u8>>, reports: &[Report]) -> io::Result<()> {
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let count = |s: Status| {
        reports
            .iter()
            .map(|r| r.checks.iter().filter(|c| c.status == s).count())
            .sum::<usize>()
            .to_string()
    };
    let tests: usize = reports.iter().map(|r| r.checks.len()).sum();
    let time: u64 = reports.iter().map(|r| r.elapsed_ms).sum();
    writer
        .create_element("testsuites")
        .with_attribute(("name", "toolhost conformance"))
        .with_attribute(("tests", tests.to_string().as_str()))
        .with_attribute(("failures", count(Status::Failed).as_str()))
        .with_attribute(("errors", "0"))
        .with_attribute(("skipped", count(Status::Skipped).as_str()))
        .with_attribute(("time", seconds(time).as_str()))
        .write_inner_content(|w| {
            for report in reports {
                suite(w, report)?;
            }
            Ok(())
        })?;
    Ok(())
}

fn suite(writer: &mut Writer<Vec<u8>>, report: &Report) -> io::Result<()> {
    let (passed, failed, skipped) = report.counts();
    let file = xml_text(&report.file);
    let classname = format!(
        "toolhost.conformance.{}",
        std::path::Path::new(&report.file)
            .file_name()
            .map_or(file.clone(), |n| xml_text(&n.to_string_lossy()))
    );
    writer
        .create_element("testsuite")
        .with_attribute(("name", file.as_str()))
        .with_attribute(("tests", (passed + failed + skipped).to_string().as_str()))
        .with_attribute(("failures", failed.to_string().as_str()))
        .with_attribute(("errors", "0"))
        .with_attribute(("skipped", skipped.to_string().as_str()))
        .with_attribute(("time", seconds(report.elapsed_ms).as_str()))
        .write_inner_content(|w| {
            let properties = [("hash", &report.hash), ("world", &report.world)];
            if properties.iter().any(|(_, v)| v.is_some()) {
                w.create_element("properties").write_inner_content(|w| {
                    for (name, value) in properties {
                        if let Some(value) = value {
                            w.create_element("property")
                                .with_attribute(("name", name))
                                .with_attribute(("value", xml_text(value).as_str()))
                                .write_empty()?;
                        }
                    }
                    Ok(())
                })?;
            }
            for check in &report.checks {
                w.create_element("testcase")
                    .with_attribute(("name", check.check.as_str()))
                    .with_attribute(("classname", classname.as_str()))
                    .with_attribute(("time", seconds(check.elapsed_ms).as_str()))
                    .write_inner_content(|w| {
                        match check.status {
                            Status::Failed => {
                                let first = check.problems.first().map_or(String::new(), |p| match &p.tool {
                                    Some(tool) => format!("tool `{tool}`: {}", p.message),
                                    None => p.message.clone(),
                                });
                                let body: Vec<String> = check
                                    .problems
                                    .iter()
                                    .map(|p| {
                                        let who = p
                                            .tool
                                            .as_ref()
                                            .map_or(String::new(), |t| format!("tool `{t}`: "));
                                        format!("{who}{}\nfix: {}", p.message, p.fix)
                                    })
                                    .collect();
                                w.create_element("failure")
                                    .with_attribute((
                                        "message",
                                        xml_text(&crate::report::clip(&first, 500)).as_str(),
                                    ))
                                    .with_attribute(("type", check.check.as_str()))
                                    .write_text_content(BytesText::new(&xml_text(&body.join("\n\n"))))?;
                            }
                            Status::Skipped => {
                                let why = check.skipped.as_deref().unwrap_or("skipped");
                                w.create_element("skipped")
                                    .with_attribute(("message", xml_text(why).as_str()))
                                    .write_empty()?;
                            }
                            Status::Passed => {}
                        }
                        let mut out =
                            format!("{}: {}\ntried: {}", check.check, check.check.title(), check.tried);
                        for note in &check.notes {
                            out.push_str(&format!("\nnote: {note}"));
                        }
                        w.create_element("system-out")
                            .write_text_content(BytesText::new(&xml_text(&out)))?;
                        Ok(())
                    })?;
            }
            Ok(())
        })?;
    Ok(())
}

fn seconds(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

/// `text` with the characters XML 1.0 cannot hold (even escaped) written as
/// `\u{..}`.
fn xml_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            let ok = matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
            if ok { c.to_string() } else { c.escape_unicode().to_string() }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_xml_cannot_hold_are_escaped() {
        assert_eq!(xml_text("a\u{0}b\u{1b}c ✓ 🦀"), "a\\u{0}b\\u{1b}c ✓ 🦀");
    }
}
