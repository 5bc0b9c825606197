//! Checking a decoded [`Request`] against the export it addresses, yielding
//! the errno the server replies with. Sentences quoted are from
//! NetworkBlockDevice/nbd `doc/proto.md` ("Block size constraints", "Command
//! flags", "Request types", "Error values").

use crate::codec::{Command, Errno, Request};
use crate::consts::{cmd_flags, tflags, DEFAULT_MAX_PAYLOAD};

/// What the server advertised for one export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportLimits {
    /// Export size in bytes.
    pub size_bytes: u64,
    /// Advertised minimum block size (alignment of offset and length); 1 = none.
    pub min_block: u32,
    /// Advertised preferred block size.
    pub preferred_block: u32,
    /// Advertised maximum block (payload) size.
    pub max_payload: u32,
    /// Transmission flags as advertised (`consts::tflags`); `READ_ONLY` among them.
    pub transmission_flags: u16,
}

impl ExportLimits {
    /// A writable export of `size_bytes` with the spec's defaults ("a minimum
    /// block size of 1, a preferred block size of 2^12 (4,096), and a maximum
    /// block payload size that is at least 2^25 (33,554,432)") advertising
    /// flush, FUA, trim and write-zeroes.
    pub fn new(size_bytes: u64) -> Self {
        ExportLimits {
            size_bytes,
            min_block: 1,
            preferred_block: 4096,
            max_payload: DEFAULT_MAX_PAYLOAD,
            transmission_flags: tflags::HAS_FLAGS
                | tflags::SEND_FLUSH
                | tflags::SEND_FUA
                | tflags::SEND_TRIM
                | tflags::SEND_WRITE_ZEROES,
        }
    }

    /// Whether `NBD_FLAG_READ_ONLY` is advertised.
    pub fn read_only(&self) -> bool {
        self.has(tflags::READ_ONLY)
    }

    /// Sets or clears `NBD_FLAG_READ_ONLY`.
    pub fn with_read_only(mut self, ro: bool) -> Self {
        if ro {
            self.transmission_flags |= tflags::READ_ONLY;
        } else {
            self.transmission_flags &= !tflags::READ_ONLY;
        }
        self
    }

    fn has(&self, flag: u16) -> bool {
        self.transmission_flags & flag != 0
    }

    /// Checks the advertised values against the spec's constraints on them:
    /// minimum "MUST be a power of 2 ... and MAY be as small as 1" (and at most
    /// 2^16); preferred "MUST be a power of 2 at least as large as the maximum
    /// of the minimum block size and 2^9 (512)"; maximum "MUST be either an
    /// integer multiple of the minimum block size or the value 0xffffffff";
    /// `NBD_FLAG_HAS_FLAGS` "MUST always be 1".
    pub fn check(&self) -> Result<(), &'static str> {
        if !self.min_block.is_power_of_two() || self.min_block > 1 << 16 {
            return Err("minimum block size must be a power of 2 no larger than 64 KiB");
        }
        if !self.preferred_block.is_power_of_two() || self.preferred_block < self.min_block.max(512) {
            return Err("preferred block size must be a power of 2 ≥ max(minimum, 512)");
        }
        if self.max_payload != u32::MAX && self.max_payload % self.min_block != 0 {
            return Err("maximum block size must be a multiple of the minimum block size");
        }
        if self.max_payload < self.preferred_block.min(u32::try_from(self.size_bytes).unwrap_or(u32::MAX)) {
            return Err("maximum block size must be ≥ min(preferred block size, export size)");
        }
        if !self.has(tflags::HAS_FLAGS) {
            return Err("NBD_FLAG_HAS_FLAGS must be set");
        }
        if self.has(tflags::SEND_FAST_ZERO) && !self.has(tflags::SEND_WRITE_ZEROES) {
            return Err("NBD_FLAG_SEND_FAST_ZERO requires NBD_FLAG_SEND_WRITE_ZEROES");
        }
        Ok(())
    }
}

/// Validates `req` against `export`. `Ok(())` means the server may perform it;
/// `Err(e)` is the error to put in the reply (for `NBD_CMD_WRITE` the server
/// must still consume the *length* payload bytes that follow the header).
///
/// `NBD_CMD_CACHE` and `NBD_CMD_BLOCK_STATUS` are refused: this server
/// advertises neither `NBD_FLAG_SEND_CACHE` nor metadata contexts, and
/// "Servers SHOULD reply with `NBD_EINVAL` to clients sending
/// `NBD_CMD_BLOCK_STATUS` without selecting at least one metadata context."
pub fn validate(req: &Request, export: &ExportLimits) -> Result<(), Errno> {
    let writes = matches!(req.kind, Command::Write | Command::Trim | Command::WriteZeroes);
    // "it SHOULD return `NBD_EPERM` if it receives a write or trim request on a
    // read-only export"; WRITE_ZEROES: "It SHOULD return `NBD_EPERM` if it
    // receives a write zeroes request on a read-only export." Checked first: a
    // read-only export advertises neither TRIM nor WRITE_ZEROES, and EPERM says
    // why better than the EINVAL of a command not advertised.
    if writes && export.read_only() {
        return Err(Errno::Perm);
    }
    check_exposed(req, export)?;
    check_flags(req, export)?;
    match req.kind {
        // DISC: "The values of the length and offset fields in a disconnect
        // request MUST be zero." FLUSH: "*length* and *offset* are reserved,
        // and MUST be set to all-zero."
        Command::Disc | Command::Flush => {
            if req.offset != 0 || req.length != 0 {
                return Err(Errno::Inval);
            }
            return Ok(());
        }
        _ => {}
    }
    check_extent(req, export)
}

/// The command must be one the export advertised.
fn check_exposed(req: &Request, export: &ExportLimits) -> Result<(), Errno> {
    // "The server SHOULD return `NBD_EINVAL` if it receives an unknown command."
    // Commands whose support flag was not advertised are treated alike: "The
    // client MUST NOT use a feature documented as 'exposed' by a flag unless
    // that flag was set."
    let exposed = match req.kind {
        Command::Read | Command::Write | Command::Disc => true,
        Command::Flush => export.has(tflags::SEND_FLUSH),
        Command::Trim => export.has(tflags::SEND_TRIM),
        Command::WriteZeroes => export.has(tflags::SEND_WRITE_ZEROES),
        Command::Cache | Command::BlockStatus | Command::Other(_) => false,
    };
    if !exposed {
        return Err(Errno::Inval);
    }
    Ok(())
}

/// Every command flag set must be known and applicable to this command on this export.
fn check_flags(req: &Request, export: &ExportLimits) -> Result<(), Errno> {
    // "The server SHOULD return `NBD_EINVAL` if it receives an unknown command
    // flag. It also SHOULD return `NBD_EINVAL` if it receives a request with a
    // flag not explicitly documented as applicable to the given request."
    if req.flags & !cmd_flags::ALL != 0 {
        return Err(Errno::Inval);
    }
    let mut applicable = 0;
    // FUA: "This flag is valid for all commands, provided `NBD_FLAG_SEND_FUA`
    // has been negotiated, in which case the server MUST accept all commands
    // with this bit set (even by ignoring the bit)."
    if export.has(tflags::SEND_FUA) {
        applicable |= cmd_flags::FUA;
    }
    match req.kind {
        // DF: "valid during `NBD_CMD_READ` ... MUST NOT be set unless the
        // transmission flags include `NBD_FLAG_SEND_DF`."
        Command::Read if export.has(tflags::SEND_DF) => applicable |= cmd_flags::DF,
        // `NBD_FLAG_SEND_WRITE_ZEROES` "exposes support for
        // `NBD_CMD_WRITE_ZEROES` and `NBD_CMD_FLAG_NO_HOLE`"; FAST_ZERO: "valid
        // during `NBD_CMD_WRITE_ZEROES` ... The client MUST NOT set this unless
        // the server advertised `NBD_FLAG_SEND_FAST_ZERO`" (and "SHOULD fail
        // with `NBD_EINVAL` if the `NBD_CMD_FLAG_FAST_ZERO` flag was set").
        Command::WriteZeroes => {
            applicable |= cmd_flags::NO_HOLE;
            if export.has(tflags::SEND_FAST_ZERO) {
                applicable |= cmd_flags::FAST_ZERO;
            }
        }
        _ => {}
    }
    if req.flags & !applicable != 0 {
        return Err(Errno::Inval);
    }
    Ok(())
}

/// The extent of a data command: not empty, aligned, within the payload limit where one
/// applies, and inside the export.
fn check_extent(req: &Request, export: &ExportLimits) -> Result<(), Errno> {
    // Zero length: "The client SHOULD NOT request a read [write, trim, write
    // zeroes] length of 0; the behavior of a server on such a request is
    // unspecified although the server SHOULD NOT disconnect." swan answers
    // EINVAL (as nbdkit does) rather than disconnecting.
    if req.length == 0 {
        return Err(Errno::Inval);
    }

    // "the client MUST ensure that *offset* and *length* are integer multiples
    // of any advertised minimum block size ... The server SHOULD report an
    // `NBD_EINVAL` error if the client's request is not aligned to advertised
    // minimum block size boundaries, or is larger than the advertised maximum
    // block size."
    let min = u64::from(export.min_block.max(1));
    if req.offset % min != 0 || u64::from(req.length) % min != 0 {
        return Err(Errno::Inval);
    }
    // "for NBD_CMD_READ, NBD_CMD_WRITE, NBD_CMD_CACHE and NBD_CMD_WRITE_ZEROES
    // (except for when NBD_CMD_FLAG_FAST_ZERO is set), the client MUST NOT use
    // a *length* larger than any advertised maximum block size." For TRIM and
    // fast WRITE_ZEROES the length is not bounded by it.
    let bounded = match req.kind {
        Command::Read | Command::Write => true,
        Command::WriteZeroes => req.flags & cmd_flags::FAST_ZERO == 0,
        _ => false,
    };
    if bounded && req.length > export.max_payload {
        return Err(Errno::Inval);
    }

    // "the client MUST NOT use a *length* which, when added to *offset*, would
    // exceed the export size." Errors: "The server SHOULD return `NBD_ENOSPC`
    // if it receives a write request including one or more sectors beyond the
    // size of the device ... It SHOULD return `NBD_EINVAL` if it receives a
    // read or trim request including one or more sectors beyond the size of
    // the device"; WRITE_ZEROES: "SHOULD return `NBD_ENOSPC` if it receives a
    // write zeroes request including one or more sectors beyond the size".
    // An offset + length that overflows u64 is beyond any export.
    let beyond = match req.offset.checked_add(u64::from(req.length)) {
        Some(end) => end > export.size_bytes,
        None => true,
    };
    if beyond {
        return Err(match req.kind {
            Command::Write | Command::WriteZeroes => Errno::NoSpc,
            _ => Errno::Inval,
        });
    }
    Ok(())
}
