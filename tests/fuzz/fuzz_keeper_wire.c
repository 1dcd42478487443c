/* fuzz_keeper_wire.c - libFuzzer target: read arbitrary bytes as the
 * frames between an agent and a rank's keeper (keeper_wire.c), as either
 * end does.  A frame taken must lie within the input, hold fields in
 * range, and encode back to exactly the same bytes (the format is
 * canonical); a refusal must say why; an ADOPT's LAUNCH goes through the
 * link's strict parser as the agent's take-over does, and a SPAWN's plan
 * through the keeper's. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = 0;
    while (off < size) {
        dr_keep_msg_t m;
        size_t used = 0;
        dr_err_t err = {0};
        int rc = dr_keep_decode(data + off, size - off, &used, &m, &err);
        if (rc < 0) {
            if (!err.msg[0])
                abort(); /* a refusal says why */
            return 0;
        }
        if (rc == 0)
            return 0; /* a partial frame: more is needed */
        if (used < DR_KEEP_HDR || used > size - off)
            abort();
        if (m.type == DR_KEEP_SIGNAL && (m.sig <= 0 || m.sig >= NSIG))
            abort();
        if ((m.type == DR_KEEP_ENDED || m.type == DR_KEEP_ADOPT) &&
            (m.signal < 0 || m.signal >= NSIG))
            abort();
        if (m.type == DR_KEEP_ADOPT) {
            if (m.why >= DR_END_NWHY || memchr(m.cgroup, '\0', m.cgroup_len) || m.text_len == 0)
                abort();
            dr_msg_launch_t l;
            memset(&l, 0, sizeof l);
            dr_err_t lerr = {0};
            if (dr_msg_launch_parse(&l, m.text, m.text_len, &lerr) == 0)
                dr_msg_launch_free(&l);
            else if (!lerr.msg[0])
                abort();
        }
        if (m.type == DR_KEEP_SPAWN) {
            /* the plan a keeper starts a rank from: unpacked, it packs
             * back to the same bytes */
            dr_agent_plan_t pl;
            dr_err_t perr = {0};
            if (dr_keep_plan_unpack(m.text, m.text_len, &pl, &perr) == 0) {
                if (!pl.argv[0] || !pl.argv[0][0] || !pl.cwd || !pl.cgroup || !pl.json)
                    abort();
                uint8_t *pb;
                size_t pn;
                if (dr_keep_plan_pack(&pl, &pb, &pn) != 0)
                    abort();
                if (pn != used || memcmp(pb, data + off, pn) != 0)
                    abort();
                free(pb);
                dr_keep_plan_free(&pl);
            } else if (!perr.msg[0]) {
                abort();
            }
        }
        uint8_t *b;
        size_t n;
        if (dr_keep_encode(&m, &b, &n) != 0)
            abort();
        if (n != used || memcmp(b, data + off, n) != 0)
            abort(); /* canonical: the same bytes again */
        free(b);
        off += used;
    }
    return 0;
}
