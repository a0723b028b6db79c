//! Layouts, lengths and encodings of `kfd_sys::sdma` and `kfd_sys::pm4`,
//! pinned by hand: Debian ships no header of these formats (the kernel's
//! `vega10_sdma_pkt_open.h` and `soc15d.h` are not in linux-libc-dev;
//! ROCr's `sdma_registers.h` and `amd_gpu_pm4.h` and kfdtest's
//! `sdma_pkt_struct.h` and `pm4_pkt_struct_*.h` are not installed). Each
//! expectation names the header it was read from.

use std::mem::{offset_of, size_of};

use kfd_sys::packet::{CompareFunction, Dwords, PacketError};
use kfd_sys::pm4::*;
use kfd_sys::sdma::*;
use zerocopy::IntoBytes;

/// Checks `size_of::<T>() == 4 * T::DWORDS` and the dword index of each
/// named field.
macro_rules! dword_layout {
    ($t:ty, $n:expr, [$($field:ident = $dw:expr),+ $(,)?]) => {{
        assert_eq!(size_of::<$t>(), 4 * $n, "size of {}", stringify!($t));
        assert_eq!(<$t>::DWORDS, $n, "DWORDS of {}", stringify!($t));
        $(assert_eq!(
            offset_of!($t, $field),
            4 * $dw,
            "{}.{}",
            stringify!($t),
            stringify!($field)
        );)+
    }};
}

/// Dword offsets of vega10_sdma_pkt_open.h (`*_offset` of each word) and
/// ROCr's sdma_registers.h (the `DW_n_DATA` of each union).
#[test]
fn sdma_layouts() {
    assert_eq!(size_of::<SdmaHeader>(), 4);
    dword_layout!(SDMA_PKT_NOP, 1, [header = 0]);
    dword_layout!(
        SDMA_PKT_COPY_LINEAR,
        7,
        [
            header = 0,
            count = 1,
            parameter = 2,
            src_addr_lo = 3,
            src_addr_hi = 4,
            dst_addr_lo = 5,
            dst_addr_hi = 6
        ]
    );
    dword_layout!(
        SDMA_PKT_CONSTANT_FILL,
        5,
        [
            header = 0,
            dst_addr_lo = 1,
            dst_addr_hi = 2,
            data = 3,
            count = 4
        ]
    );
    dword_layout!(
        SDMA_PKT_WRITE_UNTILED,
        4,
        [header = 0, dst_addr_lo = 1, dst_addr_hi = 2, count = 3]
    );
    dword_layout!(
        SDMA_PKT_FENCE,
        4,
        [header = 0, addr_lo = 1, addr_hi = 2, data = 3]
    );
    dword_layout!(
        SDMA_PKT_FENCE_64B,
        5,
        [
            header = 0,
            addr_lo = 1,
            addr_hi = 2,
            data_lo = 3,
            data_hi = 4
        ]
    );
    dword_layout!(SDMA_PKT_TRAP, 2, [header = 0, int_ctx = 1]);
    dword_layout!(
        SDMA_PKT_POLL_REGMEM,
        6,
        [
            header = 0,
            addr_lo = 1,
            addr_hi = 2,
            value = 3,
            mask = 4,
            dw5 = 5
        ]
    );
    dword_layout!(
        SDMA_PKT_ATOMIC,
        8,
        [
            header = 0,
            addr_lo = 1,
            addr_hi = 2,
            src_data_lo = 3,
            src_data_hi = 4,
            cmp_data_lo = 5,
            cmp_data_hi = 6,
            loop_interval = 7
        ]
    );
    dword_layout!(
        SDMA_PKT_TIMESTAMP,
        3,
        [header = 0, addr_lo = 1, addr_hi = 2]
    );
    dword_layout!(
        SDMA_PKT_GCR,
        5,
        [header = 0, word1 = 1, word2 = 2, word3 = 3, word4 = 4]
    );
}

/// Dword offsets of kfdtest's pm4_pkt_struct_common.h (MEC_INDIRECT_BUFFER,
/// MEC_WAIT_REG_MEM, ACQUIRE_MEM, EVENT_WRITE, DISPATCH_DIRECT),
/// pm4_pkt_struct_ci.h (WRITE_DATA) and pm4_pkt_struct_ai.h
/// (MEC_RELEASE_MEM_AI); COPY_DATA and the gfx10 ACQUIRE_MEM from ROCr's
/// amd_gpu_pm4.h (`PM4_COPY_DATA_DW4_DST_ADDR_LO`,
/// `PM4_ACQUIRE_MEM_DW7_GCR_CNTL`).
#[test]
fn pm4_layouts() {
    assert_eq!(size_of::<Pm4Header>(), 4);
    dword_layout!(
        PM4_MEC_WRITE_DATA,
        4,
        [header = 0, control = 1, dst_addr_lo = 2, dst_addr_hi = 3]
    );
    dword_layout!(
        PM4_MEC_RELEASE_MEM,
        8,
        [
            header = 0,
            event_cntl = 1,
            data_cntl = 2,
            addr_lo = 3,
            addr_hi = 4,
            data_lo = 5,
            data_hi = 6,
            int_ctxid = 7
        ]
    );
    dword_layout!(
        PM4_ACQUIRE_MEM,
        7,
        [
            header = 0,
            coher_cntl = 1,
            coher_size = 2,
            coher_size_hi = 3,
            coher_base_lo = 4,
            coher_base_hi = 5,
            poll_interval = 6
        ]
    );
    dword_layout!(PM4_ACQUIRE_MEM_GFX10, 8, [base = 0, gcr_cntl = 7]);
    dword_layout!(
        PM4_MEC_INDIRECT_BUFFER,
        4,
        [header = 0, ib_base_lo = 1, ib_base_hi = 2, control = 3]
    );
    dword_layout!(
        PM4_MEC_WAIT_REG_MEM,
        7,
        [
            header = 0,
            control = 1,
            poll_addr_lo = 2,
            poll_addr_hi = 3,
            reference = 4,
            mask = 5,
            poll_interval = 6
        ]
    );
    dword_layout!(
        PM4_COPY_DATA,
        6,
        [
            header = 0,
            control = 1,
            src_addr_lo = 2,
            src_addr_hi = 3,
            dst_addr_lo = 4,
            dst_addr_hi = 5
        ]
    );
    dword_layout!(PM4_EVENT_WRITE, 2, [header = 0, event_cntl = 1]);
    dword_layout!(
        PM4_DISPATCH_DIRECT,
        5,
        [
            header = 0,
            dim_x = 1,
            dim_y = 2,
            dim_z = 3,
            dispatch_initiator = 4
        ]
    );
    // The AQL PM4-IB vendor packet carries exactly one INDIRECT_BUFFER.
    let jump = kfd_sys::hsa::amd_aql_pm4_ib_packet_t::default().ib_jump_cmd;
    assert_eq!(jump.len(), PM4_MEC_INDIRECT_BUFFER::DWORDS);
}

/// The words each SDMA builder writes, worked out by hand from the field
/// positions of sdma_registers.h / vega10_sdma_pkt_open.h.
#[test]
fn sdma_encodings() {
    let copy = SDMA_PKT_COPY_LINEAR::new(0x1_2345_6780, 0x7f00_0000_1000, 4096, SDMA_COUNT_MASK_22)
        .unwrap();
    assert_eq!(copy.dwords(), [1, 4095, 0, 0x2345_6780, 1, 0x1000, 0x7f00]);
    assert_eq!(copy.as_bytes().len(), 28);
    assert_eq!(copy.as_bytes()[4..8], 4095u32.to_le_bytes());
    // CONST_FILL: op 11, fillsize 2 (dword) in bits 31:30.
    let fill = SDMA_PKT_CONSTANT_FILL::new(0x1000, 0x5a5a_5a5a, 1024, SDMA_COUNT_MASK_22).unwrap();
    assert_eq!(fill.dwords(), [0x8000_000B, 0x1000, 0, 0x5a5a_5a5a, 1023]);
    assert_eq!(fill.fillsize(), SDMA_CONST_FILL_FILLSIZE_DWORD);
    assert_eq!(
        write(0x2000, &[0xa, 0xb, 0xc]).unwrap(),
        [2, 0x2000, 0, 2, 0xa, 0xb, 0xc]
    );
    assert_eq!(SDMA_PKT_FENCE::new(0x3008, 7).dwords(), [5, 0x3008, 0, 7]);
    assert_eq!(
        SDMA_PKT_FENCE_64B::new(0x1_0000_3010, 0x1122_3344_5566_7788).dwords(),
        [0x0205, 0x3010, 1, 0x5566_7788, 0x1122_3344]
    );
    assert_eq!(SDMA_PKT_TRAP::new(9).unwrap().dwords(), [6, 9]);
    // POLL_REGMEM: func 3 (equal) in bits 30:28, mem_poll bit 31;
    // interval 4, retry 0xfff.
    assert_eq!(
        SDMA_PKT_POLL_REGMEM::memory(0x4000, 0, !0, CompareFunction::Equal).dwords(),
        [0xB000_0008, 0x4000, 0, 0, !0, 0x0FFF_0004]
    );
    // ROCr's hdp_flush_cmd.
    assert_eq!(
        SDMA_PKT_POLL_REGMEM::HDP_FLUSH.dwords(),
        [0x8, 0, 0x8000_0000, 0, 0, 0]
    );
    // ATOMIC: operation 47 (ADD64) in bits 31:25.
    assert_eq!(
        SDMA_PKT_ATOMIC::add64(0x5000, u64::MAX).dwords(),
        [0x5E00_000A, 0x5000, 0, !0, !0, 0, 0, 0]
    );
    assert_eq!(
        SDMA_PKT_TIMESTAMP::get_global(0x6000).dwords(),
        [0x020D, 0x6000, 0]
    );
    assert_eq!(SDMA_PKT_GCR::empty().dwords(), [0x0111, 0, 0, 0, 0]);
    assert_eq!(SDMA_PKT_NOP::new().dwords(), [0]);
}

/// Out-of-range inputs are errors naming the field, not panics or
/// silently truncated fields.
#[test]
fn sdma_builders_refuse_what_the_fields_cannot_hold() {
    let e = SDMA_PKT_COPY_LINEAR::new(0, 0, 0, SDMA_COUNT_MASK_22).unwrap_err();
    assert!(
        matches!(
            e,
            PacketError::Range {
                value: 0,
                min: 1,
                ..
            }
        ),
        "{e}"
    );
    let e = SDMA_PKT_COPY_LINEAR::new(0, 0, (1 << 22) + 1, SDMA_COUNT_MASK_22).unwrap_err();
    assert_eq!(
        e.to_string(),
        "COPY_LINEAR: byte count 0x400001 is outside 0x1..=0x400000"
    );
    assert!(SDMA_PKT_COPY_LINEAR::new(0, 0, 1 << 22, SDMA_COUNT_MASK_22).is_ok());
    assert!(SDMA_PKT_COPY_LINEAR::new(0, 0, 1 << 30, SDMA_COUNT_MASK_30).is_ok());
    let e = SDMA_PKT_CONSTANT_FILL::new(0, 0, 6, SDMA_COUNT_MASK_22).unwrap_err();
    assert!(matches!(e, PacketError::Misaligned { align: 4, .. }), "{e}");
    assert!(write(0, &[]).is_err());
    let e = SDMA_PKT_TRAP::new(1 << 28).unwrap_err();
    assert!(
        matches!(
            e,
            PacketError::Range {
                field: "int_ctx",
                ..
            }
        ),
        "{e}"
    );
}

/// Packet lengths: the rules the engine reads a ring with.
#[test]
fn sdma_packet_lengths() {
    // NOP: 1 + count (bits 29:16).
    assert_eq!(packet_dwords(&[0]), Ok(1));
    assert_eq!(packet_dwords(&[3 << 16]), Ok(4));
    // WRITE: 4 + count + 1, from dword 3.
    assert_eq!(packet_dwords(&[2, 0, 0, 9]), Ok(14));
    assert!(matches!(
        packet_dwords(&[2, 0]),
        Err(PacketError::Truncated {
            need: 4,
            got: 2,
            ..
        })
    ));
    assert_eq!(packet_dwords(&[0x0205]), Ok(5));
    assert_eq!(packet_dwords(&[5]), Ok(4));
    for (op, len) in [(1, 7), (6, 2), (8, 6), (10, 8), (11, 5), (13, 3), (17, 5)] {
        assert_eq!(packet_dwords(&[op]), Ok(len), "op {op}");
    }
    // COPY sub-op 4 (linear sub-window) has another format.
    let e = packet_dwords(&[0x0401]).unwrap_err();
    assert_eq!(e.to_string(), "SDMA COPY_LINEAR sub-op 4 not supported");
    let e = packet_dwords(&[0x7F]).unwrap_err();
    assert_eq!(e.to_string(), "SDMA op 127 sub-op 0 not supported");
    assert!(packet_dwords(&[]).is_err());
}

#[test]
fn sdma_decode_round_trips() {
    let copy = SDMA_PKT_COPY_LINEAR::new(0x10, 0x20, 64, SDMA_COUNT_MASK_30).unwrap();
    let (p, len) = SdmaPacket::decode(copy.dwords()).unwrap();
    assert_eq!((p, len), (SdmaPacket::CopyLinear(copy), 7));
    if let SdmaPacket::CopyLinear(c) = p {
        assert_eq!(
            (c.src(), c.dst(), c.bytes(SDMA_COUNT_MASK_30)),
            (0x10, 0x20, 64)
        );
    }
    let w = write(0x1_0000_0040, &[1, 2]).unwrap();
    let (p, len) = SdmaPacket::decode(&w).unwrap();
    assert_eq!(len, 6);
    let SdmaPacket::Write(head, data) = p else {
        panic!("{p:?}");
    };
    assert_eq!((head.dst(), data), (0x1_0000_0040, &[1u32, 2][..]));
    let poll = SDMA_PKT_POLL_REGMEM::memory(0x40, 5, 0xff, CompareFunction::GreaterEqual);
    let (p, _) = SdmaPacket::decode(poll.dwords()).unwrap();
    let SdmaPacket::PollRegmem(q) = p else {
        panic!("{p:?}");
    };
    assert!(q.mem_poll());
    assert_eq!(
        CompareFunction::from_bits(q.func()),
        Some(CompareFunction::GreaterEqual)
    );
    let a = SDMA_PKT_ATOMIC::add64(0x88, 7);
    let (p, _) = SdmaPacket::decode(a.dwords()).unwrap();
    assert_eq!(p, SdmaPacket::Atomic(a));
    assert_eq!(
        (a.operation(), a.addr(), a.src_data()),
        (SDMA_ATOMIC_ADD64, 0x88, 7)
    );
    // A packet cut short is an error, not a panic.
    let e = SdmaPacket::decode(&copy.dwords()[..5]).unwrap_err();
    assert_eq!(e.to_string(), "short COPY_LINEAR: 5 of 7 dwords");
    assert_eq!(p.header().op(), SDMA_OP_ATOMIC);
}

#[test]
fn sdma_copy_count_width_per_asic() {
    for v in [
        90010, 90400, 90402, 90500, 100300, 100302, 110000, 110501, 120001,
    ] {
        assert_eq!(copy_count_mask(v), SDMA_COUNT_MASK_30, "gfx{v}");
    }
    for v in [90000, 90006, 90008, 90009, 100100, 100102] {
        assert_eq!(copy_count_mask(v), SDMA_COUNT_MASK_22, "gfx{v}");
    }
}

/// Header fields of soc15d.h (`CP_PACKET_GET_TYPE/COUNT`,
/// `CP_PACKET3_GET_OPCODE`) and the words of each builder, by hand from
/// kfdtest's pm4_pkt_struct_*.h and ROCr's amd_gpu_pm4.h.
#[test]
fn pm4_encodings() {
    // PM4 count = body dwords - 1 = packet dwords - 2.
    let h = Pm4Header::type3(IT_WRITE_DATA, 5).unwrap();
    assert_eq!(h.0, 0xC003_3702);
    assert_eq!((h.packet_type(), h.count(), h.opcode()), (3, 3, 0x37));
    assert_eq!(h.packet_dwords(), Ok(5));
    assert_eq!(
        write_data(0x1000, &[0x11]).unwrap(),
        [0xC003_3702, 0x0010_0500, 0x1000, 0, 0x11]
    );
    let r = PM4_MEC_RELEASE_MEM::end_of_pipe(
        0x2000,
        ReleaseData::Low32,
        5,
        ReleaseInterrupt::AfterWriteConfirm,
        5,
    )
    .unwrap();
    assert_eq!(
        r.dwords(),
        [0xC006_4902, 0x514, 0x2200_0000, 0x2000, 0, 5, 0, 5]
    );
    let a = PM4_ACQUIRE_MEM::all(PM4_COHER_CNTL_TC_ACTION_ENA);
    assert_eq!(a.dwords(), [0xC005_5802, 1 << 23, !0, 0xFF, 0, 0, 4]);
    let a = PM4_ACQUIRE_MEM_GFX10::all(0x4381);
    assert_eq!(a.dwords(), [0xC006_5802, 0, !0, 0xFF, 0, 0, 4, 0x4381]);
    assert_eq!(
        PM4_GCR_CNTL_GLI_INV_ALL
            | PM4_GCR_CNTL_GLK_INV
            | PM4_GCR_CNTL_GLV_INV
            | PM4_GCR_CNTL_GL1_INV
            | PM4_GCR_CNTL_GL2_INV,
        0x4381
    );
    let ib = PM4_MEC_INDIRECT_BUFFER::new(0x7f_7000_1000, 0x20).unwrap();
    assert_eq!(ib.dwords(), [0xC002_3F02, 0x7000_1000, 0x7f, 0x0080_0020]);
    assert_eq!((ib.ib_base(), ib.ib_size()), (0x7f_7000_1000, 0x20));
    let w = PM4_MEC_WAIT_REG_MEM::memory(0x3000, 1, !0, CompareFunction::Equal).unwrap();
    assert_eq!(w.dwords(), [0xC005_3C02, 0x13, 0x3000, 0, 1, !0, 4]);
    let c = PM4_COPY_DATA::wide(CopySource::Immediate(0xdead_beef_0bad_cafe), 0x4000).unwrap();
    assert_eq!(
        c.dwords(),
        [
            0xC004_4002,
            0x0011_0505,
            0x0bad_cafe,
            0xdead_beef,
            0x4000,
            0
        ]
    );
    let c = PM4_COPY_DATA::wide(CopySource::GpuClock, 0x4008).unwrap();
    assert_eq!(c.dwords()[1], 0x0011_0509);
    assert_eq!(
        PM4_EVENT_WRITE::cs_partial_flush().dwords(),
        [0xC000_4602, 0x407]
    );
    assert_eq!(
        PM4_DISPATCH_DIRECT::new([1, 2, 3], 1).dwords(),
        [0xC003_1502, 1, 2, 3, 1]
    );
    // kfdtest's ring filler and the type-2 packet are one dword each.
    assert_eq!(PM4_NOP_FILLER, 0xFFFF_1002);
    assert_eq!(Pm4Header(PM4_NOP_FILLER).packet_dwords(), Ok(1));
    assert_eq!(Pm4Header(PM4_TYPE2_NOP).packet_dwords(), Ok(1));
    // A NOP with a smaller count is count + 2 dwords.
    assert_eq!(Pm4Header::type3(IT_NOP, 0x4000).unwrap().count(), 0x3FFE);
}

#[test]
fn pm4_builders_refuse_what_the_fields_cannot_hold() {
    for e in [
        Pm4Header::type3(IT_NOP, 1).unwrap_err(),
        Pm4Header::type3(IT_NOP, 0x4001).unwrap_err(),
        Pm4Header::type3(0x100, 2).unwrap_err(),
        PM4_MEC_INDIRECT_BUFFER::new(0x1000, 0).unwrap_err(),
        PM4_MEC_INDIRECT_BUFFER::new(0x1000, 0x10_0000).unwrap_err(),
        PM4_MEC_INDIRECT_BUFFER::new(1 << 48, 1).unwrap_err(),
        write_data(0, &[]).unwrap_err(),
        write_data(0, &vec![0; 0x3FFD]).unwrap_err(),
    ] {
        assert!(matches!(e, PacketError::Range { .. }), "{e}");
    }
    assert!(write_data(0, &vec![0; 0x3FFC]).is_ok());
    for e in [
        PM4_MEC_INDIRECT_BUFFER::new(0x1002, 1).unwrap_err(),
        write_data(0x1001, &[1]).unwrap_err(),
        PM4_MEC_WAIT_REG_MEM::memory(0x3, 0, 0, CompareFunction::Always).unwrap_err(),
        PM4_COPY_DATA::wide(CopySource::GpuClock, 0x4004).unwrap_err(),
        PM4_COPY_DATA::wide(CopySource::Memory(0x4), 0x4000).unwrap_err(),
        PM4_MEC_RELEASE_MEM::end_of_pipe(0x2, ReleaseData::None, 0, ReleaseInterrupt::None, 0)
            .unwrap_err(),
    ] {
        assert!(matches!(e, PacketError::Misaligned { .. }), "{e}");
    }
    let e = PM4_MEC_INDIRECT_BUFFER::new(0x1002, 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "INDIRECT_BUFFER: ib_base 0x1002 is not 4-byte aligned"
    );
}

#[test]
fn pm4_decode_round_trips() {
    let w = write_data(0x40, &[7, 8]).unwrap();
    let Pm4Packet::WriteData(head, data) = Pm4Packet::decode(&w).unwrap() else {
        panic!("not WRITE_DATA");
    };
    assert_eq!(
        (head.dst(), head.dst_sel(), head.no_increment(), data),
        (0x40, PM4_DST_SEL_MEMORY, false, &[7u32, 8][..])
    );
    let r = PM4_MEC_RELEASE_MEM::end_of_pipe(
        0x80,
        ReleaseData::Data64,
        1 << 40,
        ReleaseInterrupt::CtxIdIfEqual64,
        3,
    )
    .unwrap();
    assert_eq!(Pm4Packet::decode(r.dwords()), Ok(Pm4Packet::ReleaseMem(r)));
    assert_eq!(
        (r.data_sel(), r.int_sel(), r.data(), r.addr()),
        (2, 6, 1 << 40, 0x80)
    );
    let ib = PM4_MEC_INDIRECT_BUFFER::new(0x1000, 9).unwrap();
    assert_eq!(
        Pm4Packet::decode(ib.dwords()),
        Ok(Pm4Packet::IndirectBuffer(ib))
    );
    let wr = PM4_MEC_WAIT_REG_MEM::memory(0x100, 0, 1, CompareFunction::NotEqual).unwrap();
    assert_eq!(
        Pm4Packet::decode(wr.dwords()),
        Ok(Pm4Packet::WaitRegMem(wr))
    );
    assert_eq!(
        (wr.function(), wr.mem_space(), wr.addr()),
        (4, PM4_WAIT_REG_MEM_SPACE_MEMORY, 0x100)
    );
    let c = PM4_COPY_DATA::wide(CopySource::Memory(0x200), 0x208).unwrap();
    assert_eq!(Pm4Packet::decode(c.dwords()), Ok(Pm4Packet::CopyData(c)));
    assert_eq!(
        (c.src_sel(), c.dst_sel(), c.wide_count(), c.src(), c.dst()),
        (
            PM4_COPY_DATA_SRC_MEMORY,
            PM4_DST_SEL_MEMORY,
            true,
            0x200,
            0x208
        )
    );
    assert_eq!(
        Pm4Packet::decode(PM4_ACQUIRE_MEM_GFX10::all(0).dwords()),
        Ok(Pm4Packet::AcquireMem)
    );
    assert_eq!(
        Pm4Packet::decode(PM4_EVENT_WRITE::cs_partial_flush().dwords()),
        Ok(Pm4Packet::EventWrite)
    );
    assert_eq!(
        Pm4Packet::decode(PM4_DISPATCH_DIRECT::new([1, 1, 1], 1).dwords()),
        Ok(Pm4Packet::Dispatch(IT_DISPATCH_DIRECT))
    );
    let set = [Pm4Header::type3(IT_SET_SH_REG, 3).unwrap().0, 0x200, 1];
    assert_eq!(
        Pm4Packet::decode(&set),
        Ok(Pm4Packet::SetRegister(IT_SET_SH_REG))
    );
    let other = [Pm4Header::type3(0xEE, 2).unwrap().0, 0];
    assert_eq!(Pm4Packet::decode(&other), Ok(Pm4Packet::Other(0xEE)));
    assert_eq!(opcode_name(0xEE), None);
    assert_eq!(Pm4Packet::decode(&[PM4_TYPE2_NOP]), Ok(Pm4Packet::Type2));
    assert_eq!(Pm4Packet::decode(&[PM4_NOP_FILLER]), Ok(Pm4Packet::Nop));
    // Short packets and type-0/1 headers are errors.
    let short = [Pm4Header::type3(IT_RELEASE_MEM, 4).unwrap().0, 0, 0, 0];
    assert_eq!(
        Pm4Packet::decode(&short).unwrap_err().to_string(),
        "short RELEASE_MEM: 4 of 8 dwords"
    );
    assert_eq!(
        Pm4Packet::decode(&[0x4000_0000]).unwrap_err(),
        PacketError::Pm4Type {
            header: 0x4000_0000
        }
    );
    assert!(Pm4Packet::decode(&[]).is_err());
}

#[test]
fn compare_functions_decode_their_bits() {
    for bits in 0..7 {
        assert_eq!(
            CompareFunction::from_bits(bits).map(|f| f as u32),
            Some(bits)
        );
    }
    assert_eq!(CompareFunction::from_bits(7), None);
}
