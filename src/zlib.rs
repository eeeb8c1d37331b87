//! zlib streams, written and read by coders kept per thread.
//!
//! A new encoder allocates and clears a few hundred KiB of state, which for the small
//! bodies of a save (git's objects, a page's row) was most of their compression's cost
//! (measured in commit e27d0a6); a kept one is reset between streams.
//!
//! Three levels. [`Level::Fast`] for git's loose objects, written on the save's path and
//! compressed again when packed. [`Level::Small`] for what is kept as written (a page's
//! markdown in its database row): zlib-rs's fastest level codes with fixed Huffman
//! tables, and on the bench's pages kept 1.64× where the default level keeps 2.25×
//! (measured in commit a4fc83c). [`Level::Stored`], no compression, for
//! loose trees too large to be worth deflating on the save's path (`git::deflated`).

use std::cell::RefCell;
use std::io::Write;

use flate2::{Compression, Decompress, FlushDecompress, Status, write::ZlibEncoder};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// No compression: a zlib stream of stored blocks.
    Stored,
    Fast,
    Small,
}

impl Level {
    fn compression(self) -> Compression {
        match self {
            Level::Stored => Compression::none(),
            Level::Fast => Compression::fast(),
            Level::Small => Compression::default(),
        }
    }
}

thread_local! {
    static STORED: RefCell<ZlibEncoder<Vec<u8>>> = RefCell::new(ZlibEncoder::new(Vec::new(), Level::Stored.compression()));
    static FAST: RefCell<ZlibEncoder<Vec<u8>>> = RefCell::new(ZlibEncoder::new(Vec::new(), Level::Fast.compression()));
    static SMALL: RefCell<ZlibEncoder<Vec<u8>>> = RefCell::new(ZlibEncoder::new(Vec::new(), Level::Small.compression()));
    static DECODER: RefCell<Decompress> = RefCell::new(Decompress::new(true));
}

/// The parts, one after another, as one zlib stream.
pub(crate) fn compress(level: Level, parts: &[&[u8]]) -> std::io::Result<Vec<u8>> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let encoder = match level {
        Level::Stored => &STORED,
        Level::Fast => &FAST,
        Level::Small => &SMALL,
    };
    encoder.with_borrow_mut(|z| {
        // Stored blocks add five bytes per 64 KiB; the others usually halve the input.
        let room = if level == Level::Stored { len + len / 8192 + 64 } else { len / 2 + 64 };
        *z.get_mut() = Vec::with_capacity(room);
        let written = parts.iter().try_for_each(|p| z.write_all(p));
        // `reset` finishes the stream, hands it back and readies the encoder for the next.
        match written.and_then(|()| z.reset(Vec::new())) {
            Ok(bytes) => Ok(bytes),
            Err(e) => {
                // Whatever state the failure left is not carried into the next stream.
                *z = ZlibEncoder::new(Vec::new(), level.compression());
                Err(e)
            }
        }
    })
}

/// The bytes of one zlib stream. Refuses a stream that is corrupt, truncated or
/// followed by anything.
pub(crate) fn decompress(stream: &[u8]) -> std::io::Result<Vec<u8>> {
    let corrupt = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("zlib stream: {what}"));
    DECODER.with_borrow_mut(|d| {
        d.reset(true);
        let mut out = Vec::with_capacity(stream.len() * 3 + 64);
        loop {
            let read = d.total_in() as usize;
            let status = d
                .decompress_vec(&stream[read..], &mut out, FlushDecompress::Finish)
                .map_err(|e| corrupt(&e.to_string()))?;
            match status {
                Status::StreamEnd if d.total_in() as usize == stream.len() => return Ok(out),
                Status::StreamEnd => return Err(corrupt("bytes after its end")),
                // Out of room: grow, and go on.
                _ if out.len() == out.capacity() => out.reserve(out.capacity().max(4096)),
                _ => return Err(corrupt("truncated")),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        while out.len() < n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    /// The kept coders start each stream afresh, and grow their output for bodies that
    /// do not compress (more bytes out than in) or compress very well (far more out).
    #[test]
    fn each_stream_is_its_own_and_comes_back_whole() {
        let prose = "All work and no play makes Jack a dull boy. ".repeat(20_000).into_bytes();
        for level in [Level::Stored, Level::Fast, Level::Small] {
            for body in [&b"small"[..], &noise(300_000), b"", &prose, &b"small"[..]] {
                let z = compress(level, &[body]).unwrap();
                let mut inflated = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&z[..]), &mut inflated).unwrap();
                assert_eq!(inflated, body, "{level:?}: flate2's own decoder");
                assert_eq!(decompress(&z).unwrap(), body, "{level:?}: the kept decoder");
            }
            assert_eq!(decompress(&compress(level, &[b"two ", b"parts"]).unwrap()).unwrap(), b"two parts");
        }
    }

    /// Wiki prose: the level kept for rows is the smaller one.
    #[test]
    fn the_small_level_is_smaller_on_prose() {
        let words = ["restart", "the", "ingest", "workers", "queue", "depth", "dashboards", "node", "drain", "check"];
        let mut x: u64 = 7;
        let prose: String = (0..600)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                words[(x >> 33) as usize % words.len()]
            })
            .collect::<Vec<_>>()
            .join(" ");
        let fast = compress(Level::Fast, &[prose.as_bytes()]).unwrap().len();
        let small = compress(Level::Small, &[prose.as_bytes()]).unwrap().len();
        assert!(small < fast, "small {small} bytes, fast {fast}");
    }

    #[test]
    fn a_damaged_stream_is_refused_and_the_next_one_reads() {
        let z = compress(Level::Fast, &[&noise(10_000)]).unwrap();
        assert!(decompress(&z[..z.len() / 2]).is_err(), "truncated");
        let mut longer = z.clone();
        longer.push(0);
        assert!(decompress(&longer).is_err(), "trailing bytes");
        let mut flipped = z.clone();
        flipped[20] ^= 0xff;
        assert!(decompress(&flipped).is_err(), "corrupt");
        assert!(decompress(b"").is_err(), "empty");
        assert_eq!(decompress(&compress(Level::Small, &[b"after"]).unwrap()).unwrap(), b"after");
    }
}
