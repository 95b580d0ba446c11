//! Live gathering (filled below).
