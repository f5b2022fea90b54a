//! A pseudo-terminal for the tests of what luminos does on a terminal (the
//! live line, a hint for a server typed by hand).

/// A pseudo-terminal `columns` wide: (the side luminos writes to, the side
/// the test reads).
pub fn pty(columns: u16) -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let size = libc::winsize {
        ws_row: 24,
        ws_col: columns,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty fills in two descriptors we then own; the name and
    // termios pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened for us and are owned once.
    unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(slave),
            std::os::fd::OwnedFd::from_raw_fd(master),
        )
    }
}
