//! Class 5: interpreters' own destructive APIs in inline code.

use toolhost_detector::Category;

use crate::{clean, flagged};

#[test]
fn file_deletion() {
    for cmd in [
        "perl -e 'unlink \"x\"'",
        "perl -e 'unlink glob \"*.log\"'",
        "python3 -c 'import os; os.remove(\"x\")'",
        "python -c 'import os; os.unlink(\"x\")'",
        "python3 -c 'from pathlib import Path; Path(\"x\").unlink()'",
        "ruby -e 'File.delete(\"x\")'",
        "ruby -e 'FileUtils.rm(\"x\")'",
        "node -e 'require(\"fs\").unlinkSync(\"x\")'",
        "node -e 'require(\"fs\").rmSync(\"x\")'",
        "php -r 'unlink(\"x\");'",
        "lua -e 'os.remove(\"x\")'",
        "Rscript -e 'file.remove(\"x\")'",
        "deno eval 'Deno.remove(\"x\")'",
    ] {
        flagged(cmd, Category::FileDestruction);
    }
}

#[test]
fn recursive_removal() {
    for cmd in [
        "python3 -c 'import shutil; shutil.rmtree(\"build\")'",
        "perl -MFile::Path=remove_tree -e 'remove_tree(\"d\")'",
        "perl -MFile::Path -e 'rmtree(\"d\")'",
        "ruby -rfileutils -e 'FileUtils.rm_rf(\"d\")'",
        "node -e 'require(\"fs\").rmSync(\"d\", {recursive: true, force: true})'",
        "node -e 'fs.rm(\"d\", {recursive:true}, ()=>{})'",
        "node -e 'require(\"fs\").promises.rm(\"d\", {recursive: true})'",
        "deno eval 'Deno.removeSync(\"d\", {recursive: true})'",
        "Rscript -e 'unlink(\"d\", recursive=TRUE)'",
        "pwsh -c 'Remove-Item -Recurse -Force d'",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
}

#[test]
fn devices_and_system_files() {
    flagged(
        "python3 -c 'open(\"/dev/sda\",\"w\").write(\"x\")'",
        Category::FilesystemFormat,
    );
    flagged("python3 -c 'open(\"/dev/mem\",\"wb\")'", Category::DeviceWrite);
    flagged("perl -e 'open(F, \">/dev/nvme0n1\")'", Category::FilesystemFormat);
    flagged(
        "python3 -c 'open(\"/etc/hosts\",\"a\").write(\"1.2.3.4 x\")'",
        Category::SystemConfigOverwrite,
    );
    flagged(
        "node -e 'require(\"fs\").writeFileSync(\"/etc/passwd\", \"\")'",
        Category::SystemConfigOverwrite,
    );
    flagged(
        "ruby -e 'File.write(\"/etc/sudoers\", \"x\")'",
        Category::SystemConfigOverwrite,
    );
    flagged(
        "python3 -c 'import os; os.truncate(\"/etc/shadow\", 0)'",
        Category::SystemConfigOverwrite,
    );
}

#[test]
fn processes_and_system_calls() {
    for cmd in [
        "python3 -c 'import os; os.system(\"rm -rf d\")'",
        "python3 -c 'import subprocess; subprocess.run([\"rm\",\"-rf\",\"d\"])'",
        "node -p 'require(\"child_process\").execSync(\"rm -rf d\").toString()'",
        "php -r 'system(\"rm -rf d\");'",
        "lua -e 'os.execute(\"rm -rf d\")'",
        "Rscript -e 'system(\"rm -rf d\")'",
        "bun -e 'Bun.spawnSync([\"rm\",\"-rf\",\"d\"])'",
        "osascript -e 'do shell script \"rm -rf d\"'",
        "awk 'BEGIN{system(\"rm -rf d\")}'",
        "ruby -e 'system(\"rm -rf d\")'",
        "perl -e 'system(\"rm\", \"-rf\", \"d\")'",
    ] {
        let v = flagged(cmd, Category::RecursiveDelete);
        assert!(v.categories.contains(&Category::CodeExecution), "{cmd}: {v:?}");
    }
    flagged("python3 -c 'import os; os.kill(1, 9)'", Category::ProcessKill);
}

#[test]
fn ordinary_inline_code_stays_benign() {
    for cmd in [
        "python3 -c 'print(1)'",
        "python3 -c 'print(sum(range(10)))'",
        "python3 -c 'a=[1,2]; a.remove(1); print(a)'",
        "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"x\"])'",
        "perl -ne 'print if /x/' f",
        "perl -pe 's/a/b/' f",
        "node -e 'console.log([1,2].map(x=>x*2))'",
        "node -e 'console.log(\"rmSync unlink\")'",
        "ruby -e 'puts [1,2].sum'",
        "Rscript -e 'print(1)'",
        "lua -e 'print(1)'",
        "php -r 'echo 1;'",
        "awk '{print $1}' f",
    ] {
        clean(cmd);
    }
}

/// Every interpreter of the `langs` table, not only Python, Perl and
/// Node: deletions through its standard library and its shell-outs.
#[test]
fn every_interpreter_family() {
    for cmd in [
        "ruby -e 'FileUtils.rm_rf(\"x\")'",
        "elixir -e 'File.rm_rf!(\"d\")'",
        "bb -e '(fs/delete-tree \"d\")'",
        "echo 'file delete -force x' | tclsh",
        "Rscript -e 'unlink(\"x\", recursive=TRUE)'",
        "deno eval 'Deno.remove(\"x\", {recursive:true})'",
        "bun -e 'require(\"fs\").rmSync(\"x\",{recursive:true})'",
        "pwsh -c 'Remove-Item -Recurse x'",
        "powershell -Command 'rm -r -fo d'",
        "julia -e 'rm(\"x\"; recursive=true)'",
        "echo 'Files.walk(Path.of(\"d\")).sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete())' | jshell",
        "groovy -e 'new File(\"d\").deleteDir()'",
    ] {
        flagged(cmd, Category::RecursiveDelete);
    }
    for cmd in [
        "ruby -e 'File.delete(\"x\")'",
        "php -r 'unlink(\"x\");'",
        "php -r 'rmdir(\"x\");'",
        "php -r 'array_map(\"unlink\", glob(\"*\"));'",
        "lua5.4 -e 'os.remove(\"x\")'",
        "echo 'file delete x' | tclsh",
        "bun -e 'Bun.file(\"x\").delete()'",
        "echo 'Files.delete(Path.of(\"x\"))' | jshell",
        "osascript -e 'tell application \"Finder\" to delete file \"x\"'",
    ] {
        flagged(cmd, Category::FileDestruction);
    }
    for cmd in [
        "ruby -e 'Kernel.spawn(\"rm -rf d\")'",
        "ruby -e '%x{rm -rf d}'",
        "ruby -e 'open(\"|rm -rf d\")'",
        "perl -e 'open(F, \"| rm -rf d\")'",
        "perl -e 'qx(rm -rf d)'",
        "php -r 'passthru(\"rm -rf d\");'",
        "php -r 'call_user_func(\"system\", \"rm -rf d\");'",
        "php -r 'echo `rm -rf d`;'",
        "lua -e 'io.popen(\"rm -rf d\")'",
        "tclsh <<< 'exec rm -rf d'",
        "expect -c 'spawn rm -rf d'",
        "julia -e 'run(`rm -rf d`)'",
        "groovy -e '\"rm -rf d\".execute()'",
        "osascript -l JavaScript -e 'app.doShellScript(\"rm -rf d\")'",
        "elixir -e 'System.cmd(\"rm\", [\"-rf\", \"d\"])'",
        "bun -e 'await Bun.$`rm -rf d`'",
        "Rscript -e 'system2(\"sh\", c(\"-c\", \"rm -rf d\"))'",
    ] {
        let v = flagged(cmd, Category::RecursiveDelete);
        assert!(v.categories.contains(&Category::CodeExecution), "{cmd}: {v:?}");
    }
    // An argument vector built by a call is not joined, but the code
    // still runs a program.
    flagged(
        "Rscript -e 'system2(\"rm\", c(\"-rf\", \"d\"))'",
        Category::CodeExecution,
    );
    flagged("perl -pi -e 's/a/b/' /etc/hosts", Category::SystemConfigOverwrite);
    flagged(
        "ruby -i -pe 'sub(/a/,\"b\")' /etc/hosts",
        Category::SystemConfigOverwrite,
    );
}

#[test]
fn ordinary_code_of_every_interpreter_stays_benign() {
    for cmd in [
        "ruby -e 'puts File.read(\"x\")'",
        "php -r 'echo json_encode([1,2]);'",
        "julia -e 'println(1+1)'",
        "node -e 'const m = new Map(); m.delete(1)'",
        "bun -e 'console.log(Bun.file(\"x\").size)'",
        "pwsh -c 'Get-ChildItem -Recurse | Select-Object Name'",
        "elixir -e 'IO.puts(1)'",
        "echo 'puts [expr 1+1]' | tclsh",
        "echo 'System.out.println(1)' | jshell",
        "groovy -e 'println 1'",
        "phpunit tests/",
        "perltidy x.pl",
    ] {
        clean(cmd);
    }
}
