//! (issue 2) To be written.
