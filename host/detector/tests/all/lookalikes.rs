//! Reading and everyday commands that only look alarming: each runs
//! without approval, next to the dangerous command it resembles.

use toolhost_detector::Category;

use crate::{clean, flagged};

#[test]
fn tightening_permissions_is_benign() {
    for cmd in [
        "chmod 600 ~/.ssh/id_ed25519",
        "chmod 400 ~/.ssh/id_rsa",
        "chmod go-rwx secrets.txt",
        "chmod 700 ~/.ssh",
        "chmod -R go-w src",
        "chmod 644 ~/.ssh/id_ed25519.pub",
        "chmod u+x ~/.local/bin/tool",
        "mkdir -p ~/.ssh && chmod 700 ~/.ssh",
    ] {
        clean(cmd);
    }
    for cmd in [
        "chmod 644 ~/.ssh/id_rsa",
        "chmod +r ~/.ssh/id_ed25519",
        "chmod -R 777 ~/.ssh",
        "chmod go+w ~/.bashrc",
        "chmod 600 /etc/shadow",
        "chmod 4755 ~/bin/x",
    ] {
        flagged(cmd, Category::PermissionChange);
    }
}

#[test]
fn shell_setup_idioms_are_benign() {
    for cmd in [
        "eval \"$(ssh-agent -s)\"",
        "eval $(ssh-agent)",
        "eval `ssh-agent -c`",
        "eval \"$(ssh-agent -s)\" && ssh-add ~/.ssh/id_ed25519",
        "eval \"$(dircolors -b)\"",
    ] {
        clean(cmd);
    }
    flagged("ssh-agent rm -rf d", Category::RecursiveDelete);
    flagged("eval \"$(some-tool init)\"", Category::DynamicCommand);
}

#[test]
fn variables_holding_harmless_commands_are_benign() {
    for cmd in [
        "cmd=\"ls -la\"; $cmd",
        "PAGER=less git log",
        "CMD=echo; $CMD hi",
        "run=(cargo test --all); \"${run[@]}\"",
    ] {
        clean(cmd);
    }
    flagged("cmd=\"rm -rf build\"; $cmd", Category::RecursiveDelete);
    flagged("c=$(echo ls); $c", Category::DynamicCommand);
    flagged("$(echo ls) -la", Category::DynamicCommand);
}

/// The reading commands of the outside review, each next to a family the
/// detector now catches.
#[test]
fn reading_commands_that_look_alarming_pass() {
    for cmd in [
        "chmod 600 ~/.ssh/id_ed25519",
        "chmod go-rwx secrets.txt",
        "chmod 700 ~/.ssh",
        "chmod -R go-w src",
        "eval \"$(ssh-agent -s)\"",
        "eval $(ssh-agent)",
        "cmd=\"ls -la\"; $cmd",
        "PAGER=less git log",
        "CMD=echo; $CMD hi",
        "systemctl status nginx",
        "gh pr list",
        "find . -name '*.rs' -exec grep -l foo {} +",
        "find . -type f | xargs wc -l",
        "awk '{print $1}' f.txt",
        "sort -o sorted.txt input.txt",
        "python3 -m http.server 8000 -d build",
        "git push origin main",
        "ruby -e 'puts File.read(\"x\")'",
    ] {
        clean(cmd);
    }
}
