"""ceph: a single-node Ceph cluster with its S3 gateway, for the s3 suite.

One monitor, one OSD on memstore (the objects live in the OSD's memory), pools of size 1,
no cephx (auth none), and RGW's beast frontend on a loopback port.  Everything lives in a
temporary folder; every daemon runs in the foreground as a child of the test (and dies
with it: PR_SET_PDEATHSIG), and stop() ends them by their process ids.  Up in about
10-20 s.  RGW's SigV4 region is its zonegroup, "default".  Beast runs with tcp_nodelay=1:
without it every answer on a kept-alive connection waits ~40 ms for the client's delayed
ACK (RGW writes the headers and the body apart), which a client reusing connections —
libcurl, onnxviz — pays on every request.
"""
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

import s3lib

_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent():
    """preexec_fn: the child gets SIGKILL when the test process dies, however it dies."""
    _libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


CONF = """[global]
fsid = {fsid}
mon host = v2:127.0.0.1:{mon_port}
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms bind msgr1 = false
ms client mode = crc
ms mon client mode = crc
ms service mode = crc
ms cluster mode = crc
ms mon service mode = crc
ms mon cluster mode = crc
mon data avail crit = 0
mon data avail warn = 1
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd objectstore = memstore
memstore device bytes = {mem_bytes}
osd crush chooseleaf type = 0
run dir = {d}/run
admin socket = {d}/run/$name.asok
log file = {d}/log/$name.log
mon data = {d}/mon/$name
osd data = {d}/osd/$name
keyring = {d}/keyring
pid file = {d}/run/$name.pid

[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:{rgw_port} tcp_nodelay=1
rgw data = {d}/rgw
"""


class Ceph:
    def __init__(self, mem_bytes=3 << 30):
        self.dir = tempfile.mkdtemp(prefix="oxs-ceph-")
        self.mon_port, self.rgw_port = free_port(), free_port()
        self.endpoint = "http://127.0.0.1:%d" % self.rgw_port
        self.access = "AK" + uuid.uuid4().hex[:18].upper()
        self.secret = uuid.uuid4().hex + uuid.uuid4().hex
        self.procs = {}
        self.conf = os.path.join(self.dir, "ceph.conf")
        for sub in ("run", "log", "mon/mon.a", "osd/osd.0", "rgw"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        with open(self.conf, "w") as f:
            f.write(CONF.format(fsid=uuid.uuid4(), mon_port=self.mon_port, d=self.dir,
                                mem_bytes=mem_bytes, rgw_port=self.rgw_port))

    def _run(self, *cmd, timeout=60):
        p = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           preexec_fn=die_with_parent)
        if p.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd[:3]), p.stderr.decode()[-600:]))
        return p.stdout.decode()

    def _daemon(self, name, *cmd):
        log = open(os.path.join(self.dir, "log", name + ".out"), "wb")
        self.procs[name] = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        log.close()

    def ceph(self, *args, timeout=30):
        return self._run("ceph", "-c", self.conf, "--connect-timeout", "10", *args, timeout=timeout)

    def start(self):
        t0 = time.time()
        d = self.dir
        fsid = [l.split("=")[1].strip() for l in open(self.conf) if l.startswith("fsid")][0]
        self._run("monmaptool", "--create", "--fsid", fsid, "--addv", "a",
                  "[v2:127.0.0.1:%d]" % self.mon_port, os.path.join(d, "monmap"))
        self._run("ceph-authtool", "--create-keyring", os.path.join(d, "keyring"), "--gen-key",
                  "-n", "mon.", "--cap", "mon", "allow *")
        self._run("ceph-mon", "-c", self.conf, "--mkfs", "-i", "a", "--monmap",
                  os.path.join(d, "monmap"), "--keyring", os.path.join(d, "keyring"))
        self._daemon("mon", "ceph-mon", "-c", self.conf, "-i", "a", "-f")
        osd_uuid = str(uuid.uuid4())
        self.ceph("osd", "new", osd_uuid)
        self._run("ceph-osd", "-c", self.conf, "-i", "0", "--mkfs", "--osd-uuid", osd_uuid)
        self._daemon("osd", "ceph-osd", "-c", self.conf, "-i", "0", "-f")
        end = time.time() + 60
        while "1 up" not in self.ceph("osd", "stat"):
            if time.time() > end:
                raise RuntimeError("the OSD did not come up")
            time.sleep(0.3)
        self.start_rgw()
        self._run("radosgw-admin", "-c", self.conf, "user", "create", "--uid", "onnxviz-test",
                  "--display-name", "onnxviz test", "--access-key", self.access,
                  "--secret", self.secret)
        self.s3 = s3lib.S3(self.endpoint, self.access, self.secret, "default")
        self.started_s = time.time() - t0
        return self

    def start_rgw(self, wait=120):
        self._daemon("rgw", "radosgw", "-c", self.conf, "-n", "client.rgw.a", "-f")
        end = time.time() + wait
        while time.time() < end:
            try:
                c = socket.create_connection(("127.0.0.1", self.rgw_port), timeout=1)
                c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if c.recv(12).startswith(b"HTTP/1.1"):
                    c.close()
                    return
                c.close()
            except OSError:
                pass
            if self.procs["rgw"].poll() is not None:
                raise RuntimeError("radosgw exited: %s" % self.log_tail("rgw.out"))
            time.sleep(0.2)
        raise RuntimeError("radosgw did not answer")

    def stop_rgw(self, sig=signal.SIGTERM):
        p = self.procs.get("rgw")
        if p is not None and p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def pause_rgw(self):
        self.procs["rgw"].send_signal(signal.SIGSTOP)

    def resume_rgw(self):
        self.procs["rgw"].send_signal(signal.SIGCONT)

    def log_tail(self, name, n=2000):
        try:
            with open(os.path.join(self.dir, "log", name), "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def env(self):
        return {"AWS_ACCESS_KEY_ID": self.access, "AWS_SECRET_ACCESS_KEY": self.secret,
                "AWS_REGION": "default", "AWS_ENDPOINT_URL": self.endpoint}

    def stop(self):
        """Every daemon ends (TERM, then KILL), by its process id; the folder goes."""
        for name in ("rgw", "osd", "mon"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            if name == "rgw":
                p.send_signal(signal.SIGCONT)  # a paused one would not see TERM
            p.terminate()
        for name, p in self.procs.items():
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
