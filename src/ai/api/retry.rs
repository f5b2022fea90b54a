//! (issue 3) To be written.
