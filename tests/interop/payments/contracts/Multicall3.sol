// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @title Multicall3 (tryAggregate only)
/// @notice The one Multicall3 entry point x402's facilitator uses to explain
/// a failed simulation (balance, name, version, authorization state). The
/// test chain installs its runtime code at Multicall3's canonical address,
/// where every public chain has it. Test use only.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) external returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) {
                require(success, "Multicall3: call failed");
            }
            returnData[i] = Result(success, ret);
        }
    }
}
