//! A member whose I/O hangs on command, for the tests of `swan serve --member-timeout`: the
//! member's file is served through nbdfuse from nbdkit's file plugin behind its pause
//! filter, so the server's thread really waits in its system call while paused.

use super::{require, wait_deadline, Guard};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `backing` exposed at `mount/NAME` by nbdfuse, from nbdkit's file plugin behind its pause
/// filter: `pause` makes every later request hang until `resume`.
pub struct Pausable {
    pub mount: PathBuf,
    /// The file the server is given in place of `backing`.
    pub file: PathBuf,
    pub backing: PathBuf,
    control: PathBuf,
    fuse: Guard,
}

impl Pausable {
    /// Needs root, /dev/fuse, nbdfuse and nbdkit: fails loudly, naming the package, without them.
    pub fn start(backing: &Path, mount: &Path, name: &str) -> Pausable {
        require("nbdfuse", "libnbd-bin (Debian 12; nbdfuse on later releases)");
        require("nbdkit", "nbdkit");
        std::fs::create_dir_all(mount).expect("mount point");
        let control = mount.with_extension("ctl");
        let log = std::fs::File::create(mount.with_extension("log")).expect("nbdfuse log");
        let child = Command::new("nbdfuse")
            .arg(mount.join(name))
            .args(["--command", "nbdkit", "-s", "--filter=pause", "file"])
            .arg(backing)
            .arg(format!("pause-control={}", control.display()))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start nbdfuse");
        let mut p = Pausable {
            mount: mount.to_path_buf(),
            file: mount.join(name),
            backing: backing.to_path_buf(),
            control,
            fuse: Guard::new(child),
        };
        let start = Instant::now();
        while !(p.file.metadata().is_ok_and(|m| m.len() > 0) && p.control.exists()) {
            if let Some(st) = p.fuse.child().try_wait().expect("poll nbdfuse") {
                let log = std::fs::read_to_string(mount.with_extension("log")).unwrap_or_default();
                panic!("nbdfuse exited ({st}) before exposing {} (needs root and /dev/fuse):\n{log}", p.file.display());
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no {} after 30 s", p.file.display());
            std::thread::sleep(Duration::from_millis(20));
        }
        p
    }

    /// Send `cmd` ('p' or 'r') to the pause filter; it answers in upper case once done.
    fn command(&self, cmd: u8) {
        let mut s = UnixStream::connect(&self.control).expect("pause control socket");
        s.write_all(&[cmd]).expect("send to the pause filter");
        let mut answer = [0u8; 1];
        s.read_exact(&mut answer).expect("the pause filter's answer");
        assert_eq!(answer[0], cmd.to_ascii_uppercase(), "the pause filter answered {:?}", answer[0] as char);
    }

    pub fn pause(&self) {
        self.command(b'p');
    }

    pub fn resume(&self) {
        self.command(b'r');
    }
}

impl Drop for Pausable {
    fn drop(&mut self) {
        if let Ok(mut s) = UnixStream::connect(&self.control) {
            let _ = s.write_all(b"r");
        }
        for tool in ["fusermount3", "fusermount", "umount"] {
            let mut cmd = Command::new(tool);
            if tool != "umount" {
                cmd.arg("-u");
            }
            if cmd.arg(&self.mount).stderr(Stdio::null()).status().is_ok_and(|s| s.success()) {
                break;
            }
        }
        let _ = wait_deadline(self.fuse.child(), Duration::from_secs(30));
    }
}
