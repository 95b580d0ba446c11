//! Mocked-API tests (filled below).
