//! A member held in memory: the same contract as a file (blocks read back as written, a
//! discarded block reads as zeroes, nothing is short), without a file system under it, so
//! crash and fault tests build, break and reopen arrays at memory speed.
//!
//! Sparse: only blocks that were written take memory. Durability is trivially complete (a
//! sync has nothing to flush); what a power cut would leave is the business of whoever
//! records the I/O, not of the image.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::{Backing, Layer, Member, MemberError, MemberSource, Op, OpenOptions, ZonedLayout, BLOCK};

/// One in-memory member image. Cloning the `Arc` shares it; [`MemoryBacking::fork`] copies it.
#[derive(Debug)]
pub struct MemoryBacking {
    blocks: RwLock<Vec<Option<Box<[u8]>>>>,
}

impl MemoryBacking {
    /// A blank image of `blocks` blocks (all zeroes).
    pub fn new(blocks: u64) -> Arc<MemoryBacking> {
        Arc::new(MemoryBacking { blocks: RwLock::new(vec![None; blocks as usize]) })
    }

    /// An independent copy of the image as it is now.
    pub fn fork(&self) -> Arc<MemoryBacking> {
        Arc::new(MemoryBacking { blocks: RwLock::new(self.read().clone()) })
    }

    pub fn blocks(&self) -> u64 {
        self.read().len() as u64
    }

    /// Every block that holds something other than zeroes, in order.
    pub fn nonzero_blocks(&self) -> Vec<(u64, Vec<u8>)> {
        let g = self.read();
        let filled = g.iter().enumerate().filter_map(|(i, b)| Some((i as u64, b.as_deref()?)));
        filled.filter(|(_, b)| b.iter().any(|&x| x != 0)).map(|(i, b)| (i, b.to_vec())).collect()
    }

    /// Set one whole block (`None`: zeroes), as a replay of a write log does.
    pub fn put_block(&self, block: u64, data: Option<&[u8]>) {
        self.write()[block as usize] = data.map(Box::from);
    }

    fn read(&self) -> RwLockReadGuard<'_, Vec<Option<Box<[u8]>>>> {
        self.blocks.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Vec<Option<Box<[u8]>>>> {
        self.blocks.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// The image's byte range `offset..offset+len` as (block, start within it, length)
/// pieces; an error if it runs past the end (a file would read short).
fn pieces(len_blocks: usize, offset: u64, len: usize) -> io::Result<Vec<(usize, usize, usize)>> {
    if offset.saturating_add(len as u64) > (len_blocks * BLOCK) as u64 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "past the end of the in-memory member"));
    }
    let mut out = Vec::new();
    let (mut at, end) = (offset as usize, offset as usize + len);
    while at < end {
        let within = at % BLOCK;
        let n = (BLOCK - within).min(end - at);
        out.push((at / BLOCK, within, n));
        at += n;
    }
    Ok(out)
}

impl Backing for MemoryBacking {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let g = self.read();
        let mut done = 0;
        for (block, within, n) in pieces(g.len(), offset, buf.len())? {
            let out = &mut buf[done..done + n];
            match &g[block] {
                Some(b) => out.copy_from_slice(&b[within..within + n]),
                None => out.fill(0),
            }
            done += n;
        }
        Ok(())
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let mut g = self.write();
        let mut done = 0;
        for (block, within, n) in pieces(g.len(), offset, buf.len())? {
            let b = g[block].get_or_insert_with(|| vec![0u8; BLOCK].into_boxed_slice());
            b[within..within + n].copy_from_slice(&buf[done..done + n]);
            done += n;
        }
        Ok(())
    }

    fn discard(&self, offset: u64, len: u64) -> io::Result<()> {
        let mut g = self.write();
        for (block, within, n) in pieces(g.len(), offset, len as usize)? {
            match (within, n) {
                (0, BLOCK) => g[block] = None,
                _ => {
                    if let Some(b) = &mut g[block] {
                        b[within..within + n].fill(0);
                    }
                }
            }
        }
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    /// Nothing to claim: an image belongs to the one process that made it, and the test
    /// holding it decides who opens it.
    fn lock(&self, _exclusive: bool) -> io::Result<()> {
        Ok(())
    }
}

/// Members in memory, named like files: an array created, opened and replaced over these
/// never touches a file system. `direct` is ignored (there is no cache to bypass).
#[derive(Debug, Default)]
pub struct MemoryMembers {
    images: Mutex<HashMap<PathBuf, Arc<MemoryBacking>>>,
}

impl MemoryMembers {
    pub fn new() -> Arc<MemoryMembers> {
        Arc::new(MemoryMembers::default())
    }

    /// The image named `path`, if there is one.
    pub fn image(&self, path: &Path) -> Option<Arc<MemoryBacking>> {
        self.lock().get(path).cloned()
    }

    /// Name `image` `path` (replacing whatever had that name).
    pub fn insert(&self, path: &Path, image: Arc<MemoryBacking>) {
        self.lock().insert(path.to_owned(), image);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<MemoryBacking>>> {
        self.images.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl MemberSource for MemoryMembers {
    fn exists(&self, path: &Path) -> bool {
        self.lock().contains_key(path)
    }

    fn create(&self, path: &Path, bytes: u64, overwrite: bool) -> Result<(), MemberError> {
        if bytes == 0 || bytes % BLOCK as u64 != 0 {
            return Err(MemberError::BadSize { path: path.to_owned(), bytes });
        }
        let mut g = self.lock();
        if g.contains_key(path) && !overwrite {
            let source = io::Error::from(io::ErrorKind::AlreadyExists);
            return Err(MemberError::AlreadyExists { path: path.to_owned(), source });
        }
        g.insert(path.to_owned(), MemoryBacking::new(bytes / BLOCK as u64));
        Ok(())
    }

    /// An image laid out as `zoned::create` lays out a file: the device block, an empty
    /// zone table, the member's blocks.
    fn create_zoned(&self, path: &Path, layout: &ZonedLayout, overwrite: bool) -> Result<(), MemberError> {
        layout.zones.validate().map_err(|e| MemberError::Zoned { path: path.to_owned(), op: Op::Create, error: e })?;
        self.create(path, layout.file_bytes(), overwrite)?;
        let image = self.image(path).expect("just created");
        image.write_at(0, &layout.encode()).map_err(|error| MemberError::Io {
            path: path.to_owned(),
            op: Op::Create,
            error,
        })
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Member, MemberError> {
        self.open_under(path, opts, Box::new(|bytes| bytes))
    }

    fn open_under(&self, path: &Path, opts: OpenOptions, layer: Layer<'_>) -> Result<Member, MemberError> {
        let image = self.image(path).ok_or_else(|| MemberError::Io {
            path: path.to_owned(),
            op: Op::Open,
            error: io::Error::from(io::ErrorKind::NotFound),
        })?;
        Member::in_memory_under(path, image, opts.read_only, layer)
    }

    fn remove(&self, path: &Path) {
        self.lock().remove(path);
    }
}
