//! The opaque flag: set when the detector cannot see what runs, always
//! needing approval, serialized in the verdict's JSON.

use toolhost_detector::{Category, detect};

use crate::clean;

#[test]
fn opaque_verdicts_need_approval_and_say_so() {
    for cmd in [
        "sh cleanup.sh",
        "./run.sh",
        "PATH=./b:$PATH ls",
        "$X -rf /",
        "sh -c \"$CMD\"",
    ] {
        let v = detect(cmd);
        assert!(v.dangerous && v.opaque, "{cmd}: {v:?}");
        assert!(v.categories.iter().any(|c| c.is_opaque()), "{cmd}: {v:?}");
        assert!(
            v.categories
                .iter()
                .all(|c| !c.is_opaque() || !c.smart_reviewable())
        );
    }
    let v = detect("rm -rf build");
    assert!(v.dangerous && !v.opaque);
    clean("ls -la");
    assert!(!detect("ls").opaque);
}

#[test]
fn opaque_is_serialized() {
    let j = serde_json::to_value(detect("bash ./x.sh")).expect("json");
    assert_eq!(j["opaque"], true);
    assert_eq!(j["dangerous"], true);
    assert_eq!(j["categories"][0], "opaque");
    let j = serde_json::to_value(detect("rm -rf build")).expect("json");
    assert_eq!(j["opaque"], false);
    let back: toolhost_detector::Verdict =
        serde_json::from_value(serde_json::json!({"dangerous": false, "categories": [], "matches": []}))
            .expect("a verdict without opaque still parses");
    assert!(!back.opaque);
}

#[test]
fn new_categories_have_stable_names() {
    for (c, name) in [
        (Category::Opaque, "opaque"),
        (Category::CredentialAccess, "credential_access"),
        (Category::HostConfigWrite, "host_config_write"),
    ] {
        assert_eq!(c.as_str(), name);
        assert_eq!(name.parse::<Category>(), Ok(c));
        assert!(!c.smart_reviewable());
        assert!(Category::ALL.contains(&c));
    }
    assert!(!Category::Opaque.allowlistable());
    assert!(Category::RecursiveDelete.allowlistable());
}
