//! [`AgentEnv`]: a [`TestEnv`] with a mock server answered by a
//! [`MockAgent`], and the readers of what each pass sent.

use super::*;

/// A [`TestEnv`] whose commands talk to a live mock server answering as a
/// [`MockAgent`]. Derefs to the `TestEnv`.
pub struct AgentEnv {
    env: TestEnv,
    pub server: MockServer,
}

impl TestEnv {
    /// Run this env's commands against a new mock server that answers as
    /// the default [`MockAgent`] for this target.
    pub fn with_mock(self) -> AgentEnv {
        self.with_agent(|agent| agent)
    }

    /// Like [`TestEnv::with_mock`], with the agent adjusted by `build`.
    pub fn with_agent(self, build: impl FnOnce(MockAgent) -> MockAgent) -> AgentEnv {
        self.with_agent_on(MockServer::start(), build)
    }

    /// Like [`TestEnv::with_agent`], on `server` (a server in Ollama's
    /// dialect, say: [`MockServer::ollama`]).
    pub fn with_agent_on(
        self,
        server: MockServer,
        build: impl FnOnce(MockAgent) -> MockAgent,
    ) -> AgentEnv {
        let env = self.with_base_url(server.url());
        let agent = build(MockAgent::new(env.target()));
        server.respond_with(move |request| agent.reply(&request.body));
        AgentEnv { env, server }
    }
}

impl AgentEnv {
    /// Replace the agent (for a later run of the same env).
    pub fn set_agent(&self, build: impl FnOnce(MockAgent) -> MockAgent) {
        let agent = build(MockAgent::new(self.env.target()));
        self.server
            .respond_with(move |request| agent.reply(&request.body));
    }

    /// Every request so far, with the pass it belonged to.
    pub fn passes(&self) -> Vec<(Pass, RecordedRequest)> {
        let target = std::fs::canonicalize(self.env.target()).unwrap();
        self.server
            .requests()
            .into_iter()
            .map(|request| (Pass::of(&request.body, &target), request))
            .collect()
    }

    /// The directories a dir loop was sent into, from the `from`-th
    /// request on (relative to the target, `.` for it).
    pub fn loop_dirs_since(&self, from: usize) -> std::collections::BTreeSet<String> {
        self.passes()
            .into_iter()
            .skip(from)
            .filter_map(|(pass, _)| match pass {
                Pass::Dir(rel) => Some(rel),
                _ => None,
            })
            .collect()
    }

    /// The requests of one pass, in order.
    pub fn requests_of(&self, pass: &Pass) -> Vec<RecordedRequest> {
        self.passes()
            .into_iter()
            .filter(|(p, _)| p == pass)
            .map(|(_, request)| request)
            .collect()
    }

    /// [`TestEnv::run_ok`], insisting that the run sent the mock no request:
    /// everything came from the cache, and nothing (`what`) was paid for
    /// again.
    #[track_caller]
    pub fn run_ok_from_cache(&self, extra: &[&str], what: &str) -> std::process::Output {
        let requests = self.server.request_count();
        let output = self.run_ok(extra);
        assert_eq!(
            self.server.request_count(),
            requests,
            "{what} was paid for again"
        );
        output
    }

    /// Run `luminos [extra] TARGET` (stdout and stderr piped) and press
    /// Ctrl-C while it waits on the API: the mock answers the run's first
    /// `answered` requests and holds the rest, and the signal goes once
    /// `held` requests wait on it. Returns what the run did once it ended,
    /// with the hold lifted. Fails if the run does not get there, or does
    /// not end, within `within`.
    pub fn interrupt_while_waiting(
        &self,
        extra: &[&str],
        answered: usize,
        held: usize,
        within: std::time::Duration,
    ) -> std::process::Output {
        use std::process::Stdio;
        let start = self.server.request_count();
        self.server.hold_from(start + answered);
        let child = self
            .bare_cmd()
            .env("ANTHROPIC_API_KEY", "test-key")
            .args(extra)
            .arg(self.target())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        let (done, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(child.wait_with_output()));
        let got_there = self
            .server
            .wait_for_requests(start + answered + held, within);
        if !got_there {
            self.server.release();
            if let Ok(Ok(output)) = ended.try_recv() {
                panic!(
                    "the run ended ({}) before it waited on the API:\n{}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            // SAFETY: kill(2) on our own child, not reaped: it has not ended.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the run never got to wait on the API");
        }
        // SAFETY: as above; the run is held on the API, so it has not ended.
        let rc = unsafe { libc::kill(pid, libc::SIGINT) };
        assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
        let output = ended.recv_timeout(within);
        self.server.release();
        if output.is_err() {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("Ctrl-C did not end the run within {within:?}");
        }
        output.unwrap().expect("wait for luminos")
    }
}

impl std::ops::Deref for AgentEnv {
    type Target = TestEnv;

    fn deref(&self) -> &TestEnv {
        &self.env
    }
}
