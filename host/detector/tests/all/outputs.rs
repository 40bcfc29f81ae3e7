//! A program's own output files and in-language redirections are writes
//! like `>`: `sort -o`, `uniq IN OUT`, `split`, `openssl -out`, archives,
//! compressors replacing their operands, and awk's `print > "f"`.

use toolhost_detector::Category;

use crate::{clean, flagged};

#[test]
fn output_options_and_operands_write_system_files() {
    for cmd in [
        "sort -o /etc/passwd x",
        "sort -uo/etc/hosts x",
        "shuf -o /etc/hosts x",
        "uniq a /etc/passwd",
        "split -l 10 x /etc/cron.d/x",
        "csplit -f /etc/x in 5",
        "openssl enc -in a -out /etc/ssl/x",
        "iconv -f a -t b -o /etc/x y",
        "xxd -r dump /usr/bin/ls",
        "gcc -o /usr/bin/ls x.c",
        "cat x | sponge /etc/hosts",
        "yq -i '.a=1' /etc/x.yml",
        "patch /etc/passwd < d.diff",
        "curl -o /etc/x https://a",
        "curl -c ~/.bashrc https://a",
        "wget -O /etc/x https://a",
        "tar -xf a.tar -C /",
        "cd / && tar xf a.tar",
        "tar czf /etc/backup.tgz .",
        "zip -r /etc/x.zip .",
        "7z x a.7z -o/etc",
        "unzip a.zip -d /usr/local",
        "xz -d /etc/x.xz",
        "rsync -a --remove-source-files /etc/hosts /tmp/",
        "awk '{print > \"/etc/passwd\"}' f",
        "awk '{print $0 >> \"/home/u/.bashrc\"}' f",
        "gawk -i inplace '{gsub(/a/,\"b\")}1' /etc/hosts",
    ] {
        flagged(cmd, Category::SystemConfigOverwrite);
    }
    flagged("gzip /var/log/syslog", Category::LogTampering);
    flagged("wget -o /var/log/auth.log https://a", Category::LogTampering);
    flagged(
        "tar -cf a.tar --remove-files /var/log/syslog",
        Category::LogTampering,
    );
    flagged("sort -o /dev/sda x", Category::FilesystemFormat);
}

#[test]
fn commands_in_options_and_awk_programs_are_analysed() {
    flagged("sort --compress-program='rm -rf d' x", Category::RecursiveDelete);
    flagged("split --filter='rm -rf d' x", Category::RecursiveDelete);
    let v = flagged("awk 'BEGIN{system(\"rm -rf /x\")}'", Category::RecursiveDelete);
    assert!(v.categories.contains(&Category::CodeExecution));
    flagged("awk '{print | \"sh\"}' f", Category::CodeExecution);
    flagged("awk 'BEGIN{\"date\" | getline d}'", Category::CodeExecution);
    flagged("awk '{system($0)}' cmds.txt", Category::CodeExecution);
}

#[test]
fn writing_project_files_is_benign() {
    for cmd in [
        "sort -o sorted.txt input.txt",
        "sort -n input.txt",
        "uniq a b",
        "split -l 1000 big.csv part-",
        "openssl genrsa -out key.pem 2048",
        "openssl x509 -in cert.pem -noout -text",
        "gcc -o build/x x.c",
        "go build -o bin/app ./cmd/app",
        "tar czf backup.tgz src",
        "tar -xf a.tar",
        "tar -tf a.tar",
        "unzip -l a.zip",
        "gzip notes.txt",
        "gzip -k /var/log/syslog",
        "gunzip -c /var/log/syslog.2.gz",
        "yq '.a' /etc/x.yml",
        "patch -p1 < d.diff",
        "curl -o out.json https://api.example.com/x",
        "awk '{print $1}' f.txt",
        "awk -F: '{print $1}' /etc/passwd",
        "awk '$1 > 5 {print $2 > \"out.txt\"}' f",
        "awk '{print \"rm -rf /\"}' f",
        "awk '{ if ($1 > max) max = $1 } END { print max }' f",
        "gawk -i inplace '{gsub(/a/,\"b\")}1' notes.txt",
    ] {
        clean(cmd);
    }
}
