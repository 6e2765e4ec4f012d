"""s3lib: a small S3 client for the s3 suite (Python standard library only).

Signs requests with AWS Signature Version 4 (path-style addressing, signed payload
hashes) so that the tests read and write the bucket independently of the server's own
libcurl client: listing, reading objects back to check their bytes, seeding thousands of
objects, multipart uploads and conditional writes when probing the gateway itself.
"""
import datetime
import hashlib
import hmac
import http.client
import urllib.parse
import xml.etree.ElementTree as ET

NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


class S3Error(Exception):
    def __init__(self, status, body, what):
        Exception.__init__(self, "%s: %d %s" % (what, status, body[:300]))
        self.status, self.body = status, body


def _quote(s, safe="-_.~"):
    return urllib.parse.quote(s, safe=safe)


class S3:
    def __init__(self, endpoint, access, secret, region="default"):
        u = urllib.parse.urlparse(endpoint)
        self.host, self.port = u.hostname, u.port or 80
        self.access, self.secret, self.region = access, secret, region

    def _conn(self, timeout):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, bucket, key="", query=None, headers=None, body=b"", timeout=60,
                payload_hash=None):
        """One signed request; returns (status, headers dict (lowercase), body bytes)."""
        path = "/" + _quote(bucket) + ("/" + _quote(key, safe="-_.~/") if key else "")
        q = sorted((query or {}).items())
        qs = "&".join("%s=%s" % (_quote(k), _quote(str(v))) for k, v in q)
        now = datetime.datetime.now(datetime.timezone.utc)
        amzdate = now.strftime("%Y%m%dT%H%M%SZ")
        day = amzdate[:8]
        phash = payload_hash or hashlib.sha256(body).hexdigest()
        h = {"host": "%s:%d" % (self.host, self.port), "x-amz-date": amzdate,
             "x-amz-content-sha256": phash}
        for k, v in (headers or {}).items():
            h[k.lower()] = str(v)
        names = sorted(h)
        canon = "\n".join([method, path, qs, "".join("%s:%s\n" % (k, h[k].strip()) for k in names),
                           ";".join(names), phash])
        scope = "%s/%s/s3/aws4_request" % (day, self.region)
        sts = "\n".join(["AWS4-HMAC-SHA256", amzdate, scope, hashlib.sha256(canon.encode()).hexdigest()])
        k = ("AWS4" + self.secret).encode()
        for part in (day, self.region, "s3", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
        h["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
            self.access, scope, ";".join(names), sig)
        c = self._conn(timeout)
        try:
            c.request(method, path + ("?" + qs if qs else ""), body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            c.close()

    def _ok(self, res, what, ok=(200, 204)):
        if res[0] not in ok:
            raise S3Error(res[0], res[2], what)
        return res

    def make_bucket(self, bucket):
        st, _, body = self.request("PUT", bucket)
        if st not in (200, 409):
            raise S3Error(st, body, "create bucket " + bucket)

    def put(self, bucket, key, data, headers=None):
        return self.request("PUT", bucket, key, headers=headers, body=data)

    def get(self, bucket, key):
        """Bytes of the object, or None when there is none."""
        st, _, body = self.request("GET", bucket, key)
        if st == 404:
            return None
        self._ok((st, None, body), "GET %s" % key)
        return body

    def head(self, bucket, key):
        return self.request("HEAD", bucket, key)[0]

    def delete(self, bucket, key):
        self._ok(self.request("DELETE", bucket, key), "DELETE %s" % key, ok=(200, 204))

    def list(self, bucket, prefix=""):
        """Every object under prefix: [(key, size)], all pages."""
        out, token = [], None
        while True:
            q = {"list-type": "2", "prefix": prefix, "max-keys": "1000"}
            if token:
                q["continuation-token"] = token
            st, _, body = self._ok(self.request("GET", bucket, query=q), "list %s" % prefix)
            root = ET.fromstring(body)
            for c in root.findall(NS + "Contents"):
                out.append((c.find(NS + "Key").text, int(c.find(NS + "Size").text)))
            if root.findtext(NS + "IsTruncated") != "true":
                return out
            token = root.findtext(NS + "NextContinuationToken")

    def multipart(self, bucket, key, parts, complete_headers=None):
        """Upload parts (a list of bytes) as one object; returns the completion's
        (status, body)."""
        st, _, body = self._ok(self.request("POST", bucket, key, query={"uploads": ""}), "initiate")
        upload = ET.fromstring(body).findtext(NS + "UploadId")
        etags = []
        for i, p in enumerate(parts, 1):
            _, h, _ = self._ok(self.request("PUT", bucket, key, query={"partNumber": i, "uploadId": upload},
                                            body=p), "part %d" % i)
            etags.append(h.get("etag"))
        xml = "<CompleteMultipartUpload>%s</CompleteMultipartUpload>" % "".join(
            "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>" % (i, e) for i, e in enumerate(etags, 1))
        st, _, body = self.request("POST", bucket, key, query={"uploadId": upload},
                                   headers=complete_headers, body=xml.encode())
        return st, body
