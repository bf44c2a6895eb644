//! The frames of a run by id: the top level and the loop iterations that are open (or
//! were cancelled). A finished iteration is removed, so a run holds the frames of what
//! is running rather than one per iteration it ever ran. Ids are never reused: a late
//! reference to a removed frame (a timer that fires after its loop ended) finds nothing
//! instead of another iteration.

use super::{Frame, FrameId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::{Index, IndexMut};

#[derive(Debug, Default)]
pub(crate) struct Frames {
    live: HashMap<FrameId, Frame, BuildHasherDefault<IdHasher>>,
    next: FrameId,
}

impl Frames {
    /// Adds a frame; its id is the next one (the top level is 0).
    pub(crate) fn push(&mut self, frame: Frame) -> FrameId {
        let id = self.next;
        self.next += 1;
        self.live.insert(id, frame);
        id
    }

    pub(crate) fn get(&self, id: FrameId) -> Option<&Frame> {
        self.live.get(&id)
    }

    pub(crate) fn contains(&self, id: FrameId) -> bool {
        self.live.contains_key(&id)
    }

    pub(crate) fn remove(&mut self, id: FrameId) -> Option<Frame> {
        self.live.remove(&id)
    }

    /// How many frames are held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }
}

impl Index<FrameId> for Frames {
    type Output = Frame;

    #[allow(clippy::panic, reason = "as indexing a Vec: the scheduler only follows ids of frames it holds")]
    fn index(&self, id: FrameId) -> &Frame {
        self.live.get(&id).unwrap_or_else(|| panic!("frame {id} is not open"))
    }
}

impl IndexMut<FrameId> for Frames {
    #[allow(clippy::panic, reason = "as indexing a Vec: the scheduler only follows ids of frames it holds")]
    fn index_mut(&mut self, id: FrameId) -> &mut Frame {
        self.live.get_mut(&id).unwrap_or_else(|| panic!("frame {id} is not open"))
    }
}

/// Frame ids are consecutive numbers: one multiplication spreads them over the hash.
#[derive(Debug, Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, id: usize) {
        self.0 = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
