//! Look-alike letters and dashes from other scripts in command names and
//! options: judged as the ASCII they imitate, and a program name spelled
//! with them is opaque. Non-ASCII text in data stays benign.

use toolhost_detector::Category;

use crate::{clean, flagged, opaque};

#[test]
fn look_alike_dashes_and_letters_are_what_they_imitate() {
    for cmd in [
        "rm −rf /",
        "rm –rf /",
        "rm ‐rf /",
        "rm —rf /",
        "rm -гf /",
        "rм -rf /",
        "ｒｍ -rf /",
        "sudo rm −−recursive /srv",
        "ѕudo rm -rf /srv",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    flagged("git push −−fоrce", Category::GitDestructive);
    flagged("shutdоwn now", Category::SystemPower);
    flagged("chmod 777 ∕etc∕passwd", Category::PermissionChange);
}

#[test]
fn program_names_spelled_with_look_alikes_are_opaque() {
    for cmd in ["ѕudo apt install x", "rм x", "ｌｓ", "сurl https://example.com"] {
        let v = opaque(cmd);
        assert!(v.categories.contains(&Category::Opaque), "{cmd}: {v:?}");
    }
}

#[test]
fn non_ascii_text_in_data_is_benign() {
    for cmd in [
        "echo 'café'",
        "git commit -m 'résumé — fix'",
        "git commit -m \"naïve – fix\"",
        "cat naïve.txt",
        "echo привет мир",
        "grep -r 'Ωmega' docs/",
        "printf '%s\\n' 'α β γ'",
        "ls –la",
    ] {
        clean(cmd);
    }
}
