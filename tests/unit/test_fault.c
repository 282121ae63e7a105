/*
 * Faults on demand: specs, triggers, the table across a stream.
 */
#include <stdlib.h>
#include <string.h>
#include <check.h>

#include "h3100/fault.h"
#include "h3100_test.h"

static const H3100FaultOpName names[] = {
    { "read", false, 0x02 },
    { "write", false, 0x01 },
    { "identify", true, 0x06 },
    { NULL },
};

static H3100FaultSpec parse_ok(const char *text)
{
    H3100FaultSpec sp;
    GError *err = NULL;

    ck_assert_msg(h3100_fault_parse(text, names, &sp, &err), "%s: %s", text,
                  err ? err->message : "");
    return sp;
}

static void parse_bad(const char *text, const char *why)
{
    H3100FaultSpec sp;
    GError *err = NULL;

    ck_assert_msg(!h3100_fault_parse(text, names, &sp, &err),
                  "'%s' accepted", text);
    ck_assert_msg(strstr(err->message, why), "'%s': '%s' lacks '%s'", text,
                  err->message, why);
    ck_assert(!strchr(err->message, '\n'));
    g_error_free(err);
}

static H3100FaultCmd io_cmd(uint16_t qid, uint8_t opc, uint64_t slba,
                            uint64_t nlb)
{
    return (H3100FaultCmd) { .qid = qid, .opc = opc, .nsid = 1,
                             .has_lba = true, .slba = slba, .nlb = nlb };
}

START_TEST(test_parse_and_canonical_form)
{
    static const char *const specs[] = {
        "status,sc=0x281,dnr=on",
        "status,q=io,opc=read,ns=1,lba=2048+8,sc=0x2,more=on,count=0",
        "status,q=3,opc=0x02,lba=10-20,after=5,every=3,count=7,sc=0x181",
        "delay,ms=200,at=1s,for=250ms,prob=500000",
        "lost-irq,q=admin,opc=identify",
        "delay,ms=1,at=1500us,for=7ns",
        "timeout,opc=read,abort=ignore",
        "timeout,q=admin",
        "fatal,opc=write,resets=2",
        "fatal,resets=never",
        "ready-delay,ms=1500,count=2",
        "ready-delay,ms=never",
        "aer,type=error,info=3",
        "aer,type=notice,info=0x2,log=0x08",
        "warning,bits=spare+backup",
        "warning,bits=read-only",
    };

    for (size_t i = 0; i < G_N_ELEMENTS(specs); i++) {
        H3100FaultSpec a = parse_ok(specs[i]), b;
        g_autofree char *canon = h3100_fault_spec_str(&a);
        g_autofree char *again = NULL;

        b = parse_ok(canon);
        again = h3100_fault_spec_str(&b);
        ck_assert_str_eq(canon, again);
        ck_assert(!memcmp(&a, &b, sizeof(a)));
    }
    /* a named opcode says its queue; lba=S+N is S..S+N-1 */
    {
        H3100FaultSpec sp = parse_ok("status,opc=read,lba=2048+8,sc=0x281");

        ck_assert_int_eq(sp.queue, H3100_FAULT_Q_IO);
        ck_assert_uint_eq(sp.slba, 2048);
        ck_assert_uint_eq(sp.elba, 2055);
        ck_assert_uint_eq(sp.count, 1);
    }
}
END_TEST

START_TEST(test_bad_specs)
{
    parse_bad("", "the kind first");
    parse_bad("explode", "the kind first");
    parse_bad("status", "needs sc");
    parse_bad("status,sc=0x200", "bad value");
    parse_bad("status,sc=0x281,sc=0x281", "twice");
    parse_bad("status,sc=0x281,colour=red", "unknown key");
    parse_bad("status,sc=0x281,ms=3", "takes no 'ms'");
    parse_bad("delay", "needs ms");
    parse_bad("delay,ms=0", "bad value");
    parse_bad("delay,ms=600001", "bad value");
    parse_bad("lost-irq,dnr=on", "takes no 'dnr'");
    parse_bad("status,sc=0x2,abort=ignore", "takes no 'abort'");
    parse_bad("timeout,abort=maybe", "bad value");
    parse_bad("ready-delay", "needs ms=N or ms=never");
    parse_bad("ready-delay,ms=5,opc=read", "not commands");
    parse_bad("delay,ms=never", "bad value");
    parse_bad("fatal,resets=65536", "bad value");
    parse_bad("fatal,ms=3", "takes no 'ms'");
    parse_bad("aer,type=error", "needs type= and info=");
    parse_bad("aer,type=notice,info=1", "needs log=");
    parse_bad("aer,type=meteor,info=1", "bad value");
    parse_bad("aer,type=error,info=3,count=2", "takes no 'count'");
    parse_bad("aer,type=error,info=3,opc=read", "takes no 'opc'");
    parse_bad("warning", "needs bits");
    parse_bad("warning,bits=spare+spare", "bad value");
    parse_bad("warning,bits=fire", "bad value");
    parse_bad("warning,bits=spare,at=1s", "takes no 'at'");
    parse_bad("lost-irq,q=", "bad value");
    parse_bad("lost-irq,q=65536", "bad value");
    parse_bad("lost-irq,opc=frobnicate", "bad value");
    parse_bad("lost-irq,opc=0x100", "bad value");
    parse_bad("lost-irq,opc=identify,q=io", "another queue");
    parse_bad("lost-irq,q=admin,lba=1+1", "not q=admin");
    parse_bad("lost-irq,lba=5-4", "bad value");
    parse_bad("lost-irq,lba=5+0", "bad value");
    parse_bad("lost-irq,lba=18446744073709551615+2", "bad value");
    parse_bad("lost-irq,lba=-1", "bad value");
    parse_bad("lost-irq,prob=1000001", "bad value");
    parse_bad("lost-irq,at=1h", "bad value");
    parse_bad("lost-irq,for=0", "bad value");
    parse_bad("lost-irq,at=99999999999999999999", "bad value");
    parse_bad("lost-irq,count=-1", "bad value");
    parse_bad("lost-irq,count", "not key=value");
    parse_bad("lost-irq,=3", "not key=value");
    {
        g_autofree char *big = g_strnfill(H3100_FAULT_SPEC_MAX + 1, 'x');

        parse_bad(big, "at most");
    }
}
END_TEST

START_TEST(test_after_every_count)
{
    H3100FaultTable t = { 0 };
    H3100FaultSpec sp = parse_ok("status,opc=read,after=2,every=3,count=2,"
                                 "sc=0x281");
    H3100FaultCmd rd = io_cmd(1, 0x02, 0, 1), wr = io_cmd(1, 0x01, 0, 1);
    int fired[12];

    ck_assert_uint_eq(h3100_fault_arm(&t, &sp, 0, 1, NULL), 1);
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_STATUS, &wr, 0),
                     -1);
    for (int i = 0; i < 12; i++) {
        fired[i] = h3100_fault_next(&t, 0, H3100_FAULT_STATUS, &rd, 0);
    }
    /* matches 3 and 6 fire; then it is spent */
    for (int i = 0; i < 12; i++) {
        ck_assert_int_eq(fired[i], i == 2 || i == 5 ? 0 : -1);
    }
    ck_assert(h3100_fault_spent(&t.f[0]));
    ck_assert_uint_eq(t.f[0].matched, 6);
    ck_assert_uint_eq(t.f[0].fired, 2);
    /* a lookup of another kind never sees it */
    sp = parse_ok("status,sc=0x281,count=0");
    h3100_fault_arm(&t, &sp, 0, 1, NULL);
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &rd, 0),
                     -1);
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_STATUS, &rd, 0),
                     1);
}
END_TEST

START_TEST(test_queue_ns_lba_and_window)
{
    H3100FaultTable t = { 0 };
    H3100FaultSpec sp = parse_ok("lost-irq,q=2,ns=1,lba=100+10,count=0,"
                                 "at=1ms,for=1ms");
    H3100FaultCmd c;

    h3100_fault_arm(&t, &sp, 5000000, 1, NULL);
    c = io_cmd(2, 0x02, 95, 5);                     /* 95..99: no */
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &c,
                                      6000000), -1);
    c = io_cmd(2, 0x02, 95, 6);                     /* 95..100: yes */
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &c,
                                      6000000), 0);
    c = io_cmd(2, 0x02, 109, 100);                  /* 109..: yes */
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &c,
                                      6999999), 0);
    c = io_cmd(2, 0x02, 110, 1);
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &c,
                                      6000000), -1);
    c = io_cmd(1, 0x02, 100, 1);                    /* another queue */
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &c,
                                      6000000), -1);
    c = io_cmd(2, 0x02, 100, 1);
    c.nsid = 2;                                     /* another namespace */
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &c,
                                      6000000), -1);
    c.nsid = 1;
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &c,
                                      5999999), -1);  /* before at= */
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &c,
                                      7000000), -1);  /* after for= */
    c.has_lba = false;                              /* a Flush */
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_LOST_IRQ, &c,
                                      6000000), -1);
}
END_TEST

/* prob= draws from the seed: the same seed fires on the same matches. */
START_TEST(test_prob_is_seeded)
{
    H3100FaultSpec sp = parse_ok("status,prob=250000,count=0,sc=0x281");
    H3100FaultCmd c = io_cmd(1, 0x02, 0, 1);
    GString *runs[3];
    unsigned hits = 0;

    for (int r = 0; r < 3; r++) {
        H3100FaultTable t = { 0 };

        h3100_fault_arm(&t, &sp, 0, r < 2 ? 7 : 8, NULL);
        runs[r] = g_string_new(NULL);
        for (int i = 0; i < 4000; i++) {
            bool hit = h3100_fault_next(&t, 0, H3100_FAULT_STATUS, &c,
                                        0) == 0;

            g_string_append_c(runs[r], hit ? '1' : '0');
            hits += r == 0 && hit;
        }
    }
    ck_assert_str_eq(runs[0]->str, runs[1]->str);
    ck_assert_str_ne(runs[0]->str, runs[2]->str);
    ck_assert_uint_ge(hits, 850);                   /* ~1000 of 4000 */
    ck_assert_uint_le(hits, 1150);
    for (int r = 0; r < 3; r++) {
        g_string_free(runs[r], true);
    }
}
END_TEST

START_TEST(test_table_full_and_clear)
{
    H3100FaultTable t = { 0 };
    H3100FaultSpec sp = parse_ok("lost-irq");
    GError *err = NULL;

    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        ck_assert_uint_eq(h3100_fault_arm(&t, &sp, 0, 1, NULL), i + 1);
    }
    ck_assert_uint_eq(h3100_fault_arm(&t, &sp, 0, 1, &err), 0);
    ck_assert(strstr(err->message, "armed already"));
    g_clear_error(&err);
    ck_assert(h3100_fault_clear(&t, "7", NULL));
    ck_assert(!h3100_fault_clear(&t, "7", &err));
    ck_assert(strstr(err->message, "no fault 7"));
    g_clear_error(&err);
    ck_assert(!h3100_fault_clear(&t, "seven", &err));
    g_clear_error(&err);
    ck_assert_uint_eq(h3100_fault_arm(&t, &sp, 0, 1, NULL), 33);
    ck_assert_uint_eq(h3100_fault_armed(&t), H3100_FAULT_MAX);
    ck_assert(h3100_fault_clear(&t, "all", NULL));
    ck_assert_uint_eq(h3100_fault_armed(&t), 0);
}
END_TEST

START_TEST(test_stream_round_trip)
{
    H3100FaultTable t = { 0 }, back = { 0 };
    H3100FaultSpec a = parse_ok("status,prob=300000,count=0,sc=0x281");
    H3100FaultSpec b = parse_ok("delay,ms=5,lba=1-2,at=2s");
    H3100FaultCmd c = io_cmd(1, 0x02, 0, 1);
    g_autofree char *text = NULL, *list1 = NULL, *list2 = NULL;
    GError *err = NULL;

    h3100_fault_arm(&t, &a, 10, 3, NULL);
    h3100_fault_arm(&t, &b, 20, 3, NULL);
    h3100_fault_clear(&t, "1", NULL);
    h3100_fault_arm(&t, &a, 30, 3, NULL);          /* id 3 in slot 0 */
    for (int i = 0; i < 50; i++) {
        h3100_fault_next(&t, 0, H3100_FAULT_STATUS, &c, 100);
    }
    text = h3100_fault_save(&t);
    ck_assert_msg(h3100_fault_load(&back, text, names, &err), "%s",
                  err ? err->message : "");
    ck_assert(!memcmp(&t, &back, sizeof(t)));
    /* the two go on alike */
    for (int i = 0; i < 50; i++) {
        ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_STATUS, &c,
                                          100),
                         h3100_fault_next(&back, 0, H3100_FAULT_STATUS,
                                          &c, 100));
    }
    list1 = h3100_fault_list(&t);
    list2 = h3100_fault_list(&back);
    ck_assert_str_eq(list1, list2);
    ck_assert(strstr(list1, "3 status,count=0,prob=300000,sc=0x281"));
}
END_TEST

START_TEST(test_hostile_streams)
{
    static const char *const bad[] = {
        "",
        "last",
        "last x",
        "1 0 0 0 0 0 lost-irq,count=1",                   /* no last line */
        "1 0 0 0 0 0 lost-irq,count=1\nlast 0",           /* id > last */
        "1 32 0 0 0 0 lost-irq,count=1\nlast 1",          /* slot */
        "1 0 0 0 5 0 lost-irq,count=1\nlast 1",           /* fired > matched */
        "1 0 0 0 0 0 lost-irq,count=1\n1 1 0 0 0 0 lost-irq\nlast 1",
        "1 0 0 0 0 0 lost-irq\n2 0 0 0 0 0 lost-irq\nlast 2", /* slot twice */
        "1 0 0 0 0 0 explode\nlast 1",
        "1 0 0 0 0 lost-irq\nlast 1",
        "0 0 0 0 0 0 lost-irq\nlast 1",
        "1 0 0 0 0 0 status,sc=0x281\n\nlast 1",
    };
    H3100FaultTable t = { 0 };
    H3100FaultSpec sp = parse_ok("lost-irq,count=0");
    g_autofree char *before = NULL;

    h3100_fault_arm(&t, &sp, 0, 1, NULL);
    before = h3100_fault_save(&t);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        GError *err = NULL;
        g_autofree char *after = NULL;

        ck_assert_msg(!h3100_fault_load(&t, bad[i], names, &err),
                      "stream %zu loaded", i);
        g_error_free(err);
        after = h3100_fault_save(&t);
        ck_assert_str_eq(before, after);             /* unchanged */
    }
    {
        GString *many = g_string_new(NULL);
        GError *err = NULL;

        for (int i = 0; i <= H3100_FAULT_MAX; i++) {
            g_string_append_printf(many, "%d %d 0 0 0 0 lost-irq\n", i + 1,
                                   i % H3100_FAULT_MAX);
        }
        g_string_append(many, "last 40");
        ck_assert(!h3100_fault_load(&t, many->str, names, &err));
        g_error_free(err);
        g_string_free(many, true);
    }
}
END_TEST

/* read-only, ns-detach and ns-attach: their own keys, canonical forms */
START_TEST(test_read_only_and_ns_specs)
{
    static const char *const canon[][2] = {
        { "read-only", "read-only,nsattr=off" },
        { "read-only,nsattr=on", "read-only,nsattr=on" },
        { "ns-detach,ns=1", "ns-detach,ns=1" },
        { "ns-attach,ns=0x10", "ns-attach,ns=16" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(canon); i++) {
        H3100FaultSpec a = parse_ok(canon[i][0]), b;
        g_autofree char *str = h3100_fault_spec_str(&a);

        ck_assert_str_eq(str, canon[i][1]);
        b = parse_ok(str);
        ck_assert(!memcmp(&a, &b, sizeof(a)));
    }
    parse_bad("read-only,nsattr=maybe", "bad value");
    parse_bad("read-only,count=0", "takes no 'count'");
    parse_bad("read-only,ns=1", "takes no 'ns'");
    parse_bad("ns-detach", "needs ns=N");
    parse_bad("ns-attach,ns=0", "bad value");
    parse_bad("ns-detach,ns=1,for=2s", "takes no 'for'");
    parse_bad("ns-detach,ns=1,nsattr=on", "takes no 'nsattr'");
    parse_bad("status,sc=0x281,nsattr=on", "takes no 'nsattr'");
}
END_TEST

/* link-down: down when armed, for= long or until cleared; no other key */
START_TEST(test_link_down_specs)
{
    static const char *const specs[] = {
        "link-down", "link-down,for=2s", "link-down,for=1500us",
    };

    for (size_t i = 0; i < G_N_ELEMENTS(specs); i++) {
        H3100FaultSpec a = parse_ok(specs[i]);
        g_autofree char *canon = h3100_fault_spec_str(&a);

        ck_assert_str_eq(canon, specs[i]);
        ck_assert_int_eq(a.kind, H3100_FAULT_LINK_DOWN);
    }
    ck_assert_uint_eq(parse_ok("link-down,for=2s").for_ns, 2000000000);
    parse_bad("link-down,for=0", "bad value");
    parse_bad("link-down,for=2h", "bad value");
    parse_bad("link-down,at=1s", "takes no 'at'");
    parse_bad("link-down,count=2", "takes no 'count'");
    parse_bad("link-down,opc=read", "takes no 'opc'");
    parse_bad("link-down,q=admin", "takes no 'q'");
    parse_bad("link-down,ms=5", "takes no 'ms'");
}
END_TEST

/*
 * media: rw=read (the default) marks LBAs, so it takes no trigger or
 * command keys; rw=write is a trigger on Writes; both need lba=.
 */
START_TEST(test_media_specs)
{
    static const char *const good[][2] = {
        { "media,lba=2048+8", "media,rw=read,lba=2048-2055,dnr=off" },
        { "media,rw=read,ns=2,lba=0-0,dnr=on",
          "media,rw=read,ns=2,lba=0-0,dnr=on" },
        { "media,rw=write,lba=10+2,count=3,dnr=on",
          "media,rw=write,lba=10-11,count=3,dnr=on" },
        { "media,rw=write,q=2,lba=7-9,after=1,count=0",
          "media,rw=write,q=2,lba=7-9,after=1,count=0,dnr=off" },
    };
    H3100FaultTable t = { 0 };
    H3100FaultSpec sp;
    H3100FaultCmd c;

    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        H3100FaultSpec a = parse_ok(good[i][0]), b;
        g_autofree char *canon = h3100_fault_spec_str(&a);

        ck_assert_str_eq(canon, good[i][1]);
        b = parse_ok(canon);
        ck_assert(!memcmp(&a, &b, sizeof(a)));
    }
    parse_bad("media", "needs lba=");
    parse_bad("media,rw=write", "needs lba=");
    parse_bad("media,rw=bogus,lba=1+1", "bad value 'bogus' for 'rw'");
    parse_bad("media,lba=1+1,count=2", "no 'count'");
    parse_bad("media,rw=read,lba=1+1,prob=5", "no 'prob'");
    parse_bad("media,lba=1+1,opc=read", "no 'opc'");
    parse_bad("media,rw=write,lba=1+1,opc=write", "no opc");
    parse_bad("media,lba=1+1,sc=0x281", "media takes no 'sc'");
    parse_bad("status,sc=0x281,rw=read", "status takes no 'rw'");

    /* rw=write: fires on the overlapping writes, count= times */
    sp = parse_ok("media,rw=write,lba=10+2,count=2");
    ck_assert(h3100_fault_arm(&t, &sp, 0, 1, NULL));
    c = io_cmd(1, 0x01, 8, 2);
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_MEDIA, &c, 0), -1);
    c = io_cmd(1, 0x01, 8, 4);
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_MEDIA, &c, 0), 0);
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_MEDIA, &c, 0), 0);
    ck_assert_int_eq(h3100_fault_next(&t, 0, H3100_FAULT_MEDIA, &c, 0), -1);

    /* rw=write travels in a stream; rw=read is never in the table */
    {
        g_autofree char *text = h3100_fault_save(&t);
        H3100FaultTable u = { 0 };
        GError *err = NULL;

        ck_assert(h3100_fault_load(&u, text, names, &err));
        ck_assert(!h3100_fault_load(&u, "1 0 0 0 0 0 media,rw=read,"
                                    "lba=1-1,dnr=off\nlast 1", names, &err));
        ck_assert(strstr(err->message, "no fault of the table"));
        g_error_free(err);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fault");
    TCase *tc = tcase_create("fault");

    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_parse_and_canonical_form);
    tcase_add_test(tc, test_bad_specs);
    tcase_add_test(tc, test_after_every_count);
    tcase_add_test(tc, test_queue_ns_lba_and_window);
    tcase_add_test(tc, test_prob_is_seeded);
    tcase_add_test(tc, test_table_full_and_clear);
    tcase_add_test(tc, test_stream_round_trip);
    tcase_add_test(tc, test_hostile_streams);
    tcase_add_test(tc, test_read_only_and_ns_specs);
    tcase_add_test(tc, test_link_down_specs);
    tcase_add_test(tc, test_media_specs);
    return h3100_test_main(s);
}
