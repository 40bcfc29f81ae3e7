//! Commands run by bulk runners (`find -exec`, `xargs`, `parallel`): the
//! command is judged with operands standing for any files (inside the
//! folders `find` searches), one mechanism for all three.

use toolhost_detector::{Category, Context, inspect_with};

use crate::{clean, flagged, opaque};

#[test]
fn deleting_generated_names_is_bulk_deletion() {
    for cmd in [
        "find . -name '*.tmp' -exec rm -rf {} +",
        "find . -exec rm {} \\;",
        "find . -type f -okdir rm {} \\;",
        "ls | xargs rm",
        "ls | xargs -I{} rm {}",
        "find . -print0 | xargs -0 rm -f",
        "parallel rm -rf ::: a b",
        "ls | parallel rm -rf",
        "ls | parallel rm",
        "ls | parallel 'rm {.}.o'",
        "parallel -j 4 --joblog log rm ::: a",
        "xargs -I{} sh -c 'rm -rf {}'",
        "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    flagged("find / -execdir shred -u {} \\;", Category::FileDestruction);
    flagged("ls | parallel shred -u", Category::FileDestruction);
}

#[test]
fn the_folders_find_searches_are_what_the_names_are_in() {
    flagged(
        "find /etc -name '*.conf' -exec sed -i s/a/b/ {} +",
        Category::SystemConfigOverwrite,
    );
    flagged("find /etc -exec rm {} \\;", Category::FileDestruction);
    flagged("find ~/.ssh -type f -exec cat {} \\;", Category::CredentialAccess);
    flagged("find /var/log -exec truncate -s0 {} +", Category::LogTampering);
    flagged("find . -exec mv {} /etc/ \\;", Category::SystemConfigOverwrite);
    flagged("ls | xargs -I{} cp {} /etc/", Category::SystemConfigOverwrite);
    flagged("parallel cp {} /usr/bin ::: a", Category::SystemConfigOverwrite);
    flagged("find . -exec chmod 777 {} +", Category::PermissionChange);
    let protected = ["/srv/app/.toolhost"];
    let cx = Context::new().with_cwd("/srv/app").with_protected(&protected);
    for cmd in [
        "find .toolhost -type f -exec sed -i s/a/b/ {} +",
        "find /srv -name '*.toml' -exec truncate -s0 {} +",
        "find . -exec rm {} +",
    ] {
        let v = inspect_with(cmd, &cx).verdict;
        assert!(
            v.categories.contains(&Category::HostConfigWrite),
            "{cmd}: {}",
            v.summary()
        );
    }
    let v = inspect_with("find . -name '*.rs' -exec grep -l foo {} +", &cx).verdict;
    assert!(!v.dangerous, "{}", v.summary());
}

#[test]
fn commands_that_only_read_generated_names_are_benign() {
    for cmd in [
        "find . -name '*.rs' -exec grep -l foo {} +",
        "find . -type f | xargs wc -l",
        "find . -type f -exec cat {} \\;",
        "find . -type f -exec chmod 644 {} +",
        "find . -name '*.o' -exec rm -f build.log \\;",
        "ls | xargs -0 -n1 echo",
        "parallel echo {} ::: a b",
        "ls | parallel wc -l",
        "git ls-files | xargs -n 50 rustfmt --check",
    ] {
        clean(cmd);
    }
    // Script files named by the input cannot be seen.
    opaque("ls *.sh | xargs -n1 bash");
    opaque("find . -name '*.py' -exec python3 {} \\;");
    flagged("cat list | xargs -I{} sh -c '{}'", Category::DynamicCommand);
    flagged("find . -exec {} \\;", Category::DynamicCommand);
}
