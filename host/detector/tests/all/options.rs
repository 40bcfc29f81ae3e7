//! Class 3: programs that run a command given as an option or a
//! configuration value. A literal payload is analysed as shell code; a
//! computed one, or a file of commands, needs approval.

use toolhost_detector::Category;

use crate::{clean, flagged, opaque};

#[test]
fn pagers_editors_and_debuggers() {
    for cmd in [
        "LESSOPEN='|rm -rf d %s' less x",
        "less '+!rm -rf d' f",
        "vim -c ':!rm -rf d'",
        "vi +'!rm -rf d'",
        "vim -c 'silent !rm -rf d' -c q",
        "vim -c ':r !rm -rf d'",
        "vim -c 'w !rm -rf d'",
        "vim -c 'call system(\"rm -rf d\")'",
        "nvim --headless -c 'exe \"!rm -rf d\"' -c q",
        "vim -c 'py3 import shutil; shutil.rmtree(\"d\")'",
        "ex -sc '!rm -rf d' f",
        "ex f <<EOF\n!rm -rf d\nwq\nEOF",
        "ed f <<< '!rm -rf d'",
        "emacs --batch --eval '(shell-command \"rm -rf d\")'",
        "emacs -batch --eval '(call-process \"rm\" nil nil nil \"-rf\" \"d\")'",
        "emacs --batch --eval '(delete-directory \"d\" t)'",
        "gdb -batch -ex 'shell rm -rf d'",
        "gdb -ex '!rm -rf d' -ex quit",
        "gdb -batch -ex 'call system(\"rm -rf d\")' -p 1",
        "gdb -batch -ex run --args rm -rf d",
        "lldb -o 'platform shell rm -rf d'",
        "man -P 'rm -rf d' ls",
        "MANPAGER='sh -c \"rm -rf d\"' man ls",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    for cmd in [
        "vim -S evil.vim",
        "vim -u ./vimrc f",
        "emacs -batch -l x.el",
        "gdb -x cmds.gdb ./a.out",
    ] {
        opaque(cmd);
    }
    flagged("vim -c 'call system(g:cmd)'", Category::DynamicCommand);
    for cmd in [
        "less README.md",
        "less +G server.log",
        "vim -c 'set number' file.txt",
        "vim +10 file.txt",
        "vim -c 'w!' -c q f",
        "vim -c '%!sort' -c wq f",
        "vim -es -c '%s/a/b/g|x' f",
        "vim -u NONE f",
        "man ls",
        "gdb -batch -ex bt ./core",
    ] {
        clean(cmd);
    }
}

#[test]
fn archivers() {
    for cmd in [
        "tar --to-command='rm -rf d' -xf a.tar",
        "tar -xf a.tar --to-command 'sh -c \"rm -rf d\"'",
        "tar --checkpoint=1 --checkpoint-action=exec='rm -rf d' -cf a.tar .",
        "tar -cf a.tar --checkpoint=1 --checkpoint-action 'exec=rm -rf d' .",
        "tar -I 'rm -rf d' -cf a.tar .",
        "tar --use-compress-program='rm -rf d' -xf a.tar",
        "zip -T -TT 'rm -rf d' a.zip f",
        "zip a.zip f -T --unzip-command 'rm -rf d'",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    flagged(
        "tar -cf a.tar --use-compress-program=\"$X\" .",
        Category::DynamicCommand,
    );
    opaque("tar -cML 100 -F ./next.sh -f a.tar .");
    for cmd in [
        "tar xzf a.tgz",
        "tar czf backup.tgz ./docs",
        "tar --use-compress-program='zstd -T0' -cf a.tar.zst .",
        "tar -I pigz -cf a.tgz src",
        "tar --checkpoint=1000 --checkpoint-action=dot -cf a.tar .",
        "zip -r a.zip dir",
        "unzip -o assets.zip -d assets",
    ] {
        clean(cmd);
    }
}

#[test]
fn version_control() {
    for cmd in [
        "git -c core.pager='rm -rf d' log",
        "git -c alias.x='!rm -rf d' x",
        "git -c core.sshCommand='rm -rf d' fetch",
        "git -c core.editor='rm -rf d' commit",
        "git -c diff.external='rm -rf d' diff",
        "git -c filter.x.smudge='rm -rf d' checkout .",
        "git config alias.x '!rm -rf d'",
        "git config --global core.pager 'rm -rf d'",
        "git config set core.sshCommand 'rm -rf d'",
        "GIT_SSH_COMMAND='rm -rf d' git pull",
        "GIT_PAGER='rm -rf d' git log",
        "git -c protocol.ext.allow=always clone 'ext::sh -c rm% -rf% d'",
        "git clone --upload-pack='rm -rf d' host:repo",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    for cmd in [
        "git -c core.hooksPath=./hooks commit -m x",
        "git config core.hooksPath .githooks",
        "git -c include.path=./evil.cfg log",
        "GIT_EXEC_PATH=./g git status",
        "GIT_CONFIG_GLOBAL=./c git log",
    ] {
        opaque(cmd);
    }
    flagged("git -c core.pager=\"$P\" log", Category::DynamicCommand);
    for cmd in [
        "git -c color.ui=always log",
        "git -c core.pager=cat log",
        "git -c core.pager='less -R' log",
        "git -c core.hooksPath=/dev/null commit -m x",
        "git -c user.name=me commit -m x",
        "git config --global alias.st status",
        "git config user.name 'Me'",
        "git config --get core.pager",
        "git config --unset alias.x",
        "GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy_key' git pull",
        "EDITOR=vim git commit",
        "git push origin feature/login",
    ] {
        clean(cmd);
    }
}

#[test]
fn remote_shells_and_network_tools() {
    for cmd in [
        "ssh -o ProxyCommand='rm -rf d' host",
        "ssh -o 'ProxyCommand rm -rf d' host uptime",
        "ssh -oLocalCommand='rm -rf d' -o PermitLocalCommand=yes host",
        "scp -o 'ProxyCommand=rm -rf d' f host:",
        "rsync -e 'rm -rf d' a host:b",
        "rsync --rsh='ssh -o ProxyCommand=\"rm -rf d\"' a host:b",
        "rsync --rsync-path='rm -rf d' a host:b",
        "RSYNC_RSH='rm -rf d' rsync a host:b",
        "tcpdump -i eth0 -w x.pcap -G 10 -z 'rm -rf d'",
        "strace -o '|rm -rf d' ls",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    opaque("ssh -F ./cfg host");
    opaque("scp -S ./evil f host:");
    for cmd in [
        "ssh -i ~/.ssh/id_ed25519 user@host uptime",
        "ssh -o StrictHostKeyChecking=no host ls",
        "ssh -o ProxyCommand=none host",
        "ssh -D 1080 -S /tmp/ctl host",
        "rsync -av -e 'ssh -p 2222' ./site/ host:site/",
        "rsync -av ./site/ ./site-backup/",
        "tcpdump -i eth0 -c 10",
        "strace -f -o trace.txt ls",
    ] {
        clean(cmd);
    }
}

#[test]
fn build_tools_stream_editors_and_wrappers() {
    for cmd in [
        "make --eval='x: ; rm -rf d' x",
        "make CC='gcc; rm -rf d'",
        "make -f - all <<EOF\nall:\n\trm -rf d\nEOF",
        "sed 'e rm -rf d' x",
        "sed -n '1e rm -rf d' x",
        "awk 'BEGIN{system(\"rm -rf d\")}'",
        "find . -exec rm -rf {} \\;",
        "find . -execdir rm -r {} +",
        "find . -ok rm -rf {} \\;",
        "xargs rm -rf",
        "xargs -I{} sh -c 'rm -rf {}'",
        "env -S 'rm -rf d'",
        "env -S 'bash -c \"rm -rf d\"'",
        "watch -n 5 'rm -rf d'",
        "timeout 5 rm -rf d",
        "nice -n 10 rm -rf d",
        "nohup rm -rf d &",
        "flock /tmp/l -c 'rm -rf d'",
        "stdbuf -oL rm -rf d",
        "setsid rm -rf d",
        "chroot /mnt rm -rf d",
        "ionice -c 3 rm -rf d",
        "taskset -c 1 rm -rf d",
        "unshare -r rm -rf d",
        "script -qc 'rm -rf d' /dev/null",
        "su -c 'rm -rf d'",
        "su - root -c 'rm -rf d'",
        "runuser -u nobody -- rm -rf d",
        "parallel rm -rf ::: a b",
        "parallel ::: 'rm -rf d' ls",
        "echo 'rm -rf d' > f; parallel < f",
        "busybox sh -c 'rm -rf d'",
        "strace -f rm -rf d",
        "valgrind rm -rf d",
        "hyperfine 'rm -rf d'",
        "hyperfine --prepare 'rm -rf d' 'ls'",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    opaque("make SHELL=/tmp/x");
    opaque("sed -f script.sed f");
    opaque("parallel -j4 < cmds.txt");
    flagged("sed 's/x/y/e' f", Category::DynamicCommand);
    flagged("sed -n '/x/w /etc/passwd' f", Category::SystemConfigOverwrite);
    for cmd in [
        "make SHELL=/bin/bash test",
        "make CC=clang",
        "timeout 5 make test",
        "sed -i 's/old/new/g' src/lib.rs",
        "sed -n '1,5p' f",
        "sed 's/e/E/g; s|w x|y|' f",
        "find . -name '*.o' -print",
        "find . -name '*.rs' -exec wc -l {} +",
        "xargs grep foo",
        "xargs -n1 echo < names.txt",
        "awk '{print $1}' f",
        "watch -n 1 date",
        "hyperfine 'sleep 0.1'",
        "nice make -j2",
    ] {
        clean(cmd);
    }
}

/// A command hidden in a computed option value (or a computed setting
/// that could name one) needs approval; computed data does not.
#[test]
fn computed_option_commands_need_approval() {
    for cmd in [
        "vim -c \"$X\" f",
        "gdb -ex \"$C\"",
        "less \"+$X\" f",
        "git -c \"$KV\" log",
        "ssh -o \"$O\" host",
        "sed \"$S\" f",
        "sed \"s/x/y/$FLAGS\" f",
        "tar --to-command=\"$T\" -xf a.tar",
        "rsync -e \"$RSH\" a host:b",
        "python3 -c \"$CODE\"",
        "make CC=\"$CC\"",
    ] {
        let v = flagged(cmd, Category::DynamicCommand);
        assert!(v.opaque, "{cmd}: {v:?}");
    }
    for cmd in [
        "sed \"s/$a/$b/g\" f",
        "python3 -c \"print('$name')\"",
        "python3 -c 'import sys; print(sys.argv[1])' \"$x\"",
        "git -c user.name=\"$NAME\" commit -m x",
        "ssh -o ConnectTimeout=\"$T\" host uptime",
        "tar -xf \"$ARCHIVE\"",
    ] {
        clean(cmd);
    }
}
