// det of a 1 x 1 matrix as hlojit traced it before 2026-12-05 (commit f327fa8~1): LU's one-step loop overwrites
// its whole pivot record. IREE 3.13's compiler aborts ("LLVM ERROR: out of memory") or segfaults on it, on
// iree:cpu and iree:vmvx: tests/test_compile_worker.py checks that this is a CompileError, not the end of the process.
module {
  func.func @main(%arg0: tensor<1x1xf32>) -> tensor<f32> {
    %0 = stablehlo.iota dim = 0 : tensor<1xi32>
    %1 = stablehlo.iota dim = 0 : tensor<1x1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1x1xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.concatenate %arg0, %1, %2, dim = 1 : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x3xf32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %5:4 = stablehlo.while(%iterArg = %c_1, %iterArg_25 = %c_2, %iterArg_26 = %4, %iterArg_27 = %3) : tensor<i32>, tensor<i32>, tensor<1x3xf32>, tensor<1x1xi32>
    cond {
      %61 = stablehlo.compare LT, %iterArg, %iterArg_25, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %61 : tensor<i1>
    } do {
      %c_28 = stablehlo.constant dense<1> : tensor<i32>
      %61 = stablehlo.add %iterArg, %c_28 : tensor<i32>
      %c_29 = stablehlo.constant dense<1> : tensor<i32>
      %62 = stablehlo.multiply %iterArg, %c_29 : tensor<i32>
      %63 = stablehlo.iota dim = 0 : tensor<1x1xi32>
      %64 = stablehlo.iota dim = 1 : tensor<1x3xi32>
      %65 = stablehlo.iota dim = 1 : tensor<1x1xi32>
      %c_30 = stablehlo.constant dense<0> : tensor<i32>
      %66 = stablehlo.add %62, %c_30 : tensor<i32>
      %c_31 = stablehlo.constant dense<1> : tensor<i32>
      %c_32 = stablehlo.constant dense<0> : tensor<i32>
      %67 = stablehlo.compare EQ, %c_31, %c_32, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_33 = stablehlo.constant dense<-2147483648> : tensor<i32>
      %68 = stablehlo.compare EQ, %66, %c_33, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_34 = stablehlo.constant dense<-1> : tensor<i32>
      %69 = stablehlo.compare EQ, %c_31, %c_34, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %70 = stablehlo.and %68, %69 : tensor<i1>
      %71 = stablehlo.or %67, %70 : tensor<i1>
      %c_35 = stablehlo.constant dense<1> : tensor<i32>
      %72 = stablehlo.select %71, %c_35, %c_31 : tensor<i1>, tensor<i32>
      %73 = stablehlo.remainder %66, %72 : tensor<i32>
      %c_36 = stablehlo.constant dense<0> : tensor<i32>
      %74 = stablehlo.compare NE, %73, %c_36, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_37 = stablehlo.constant dense<0> : tensor<i32>
      %75 = stablehlo.compare LT, %73, %c_37, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_38 = stablehlo.constant dense<0> : tensor<i32>
      %76 = stablehlo.compare LT, %c_31, %c_38, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %77 = stablehlo.compare NE, %75, %76, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %78 = stablehlo.and %74, %77 : tensor<i1>
      %79 = stablehlo.add %73, %c_31 : tensor<i32>
      %80 = stablehlo.select %78, %79, %73 : tensor<i1>, tensor<i32>
      %c_39 = stablehlo.constant dense<0> : tensor<i32>
      %81 = stablehlo.compare EQ, %c_31, %c_39, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_40 = stablehlo.constant dense<0> : tensor<i32>
      %82 = stablehlo.select %81, %c_40, %80 : tensor<i1>, tensor<i32>
      %83 = stablehlo.add %c_0, %82 : tensor<i32>
      %c_41 = stablehlo.constant dense<0> : tensor<i32>
      %c_42 = stablehlo.constant dense<0> : tensor<i32>
      %84 = stablehlo.compare LT, %82, %c_42, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_43 = stablehlo.constant dense<3> : tensor<i32>
      %85 = stablehlo.add %82, %c_43 : tensor<i32>
      %86 = stablehlo.select %84, %85, %82 : tensor<i1>, tensor<i32>
      %87 = stablehlo.dynamic_slice %iterArg_26, %c_41, %86, sizes = [1, 1] : (tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>
      %88 = stablehlo.broadcast_in_dim %83, dims = [] : (tensor<i32>) -> tensor<1x1xi32>
      %89 = stablehlo.compare GE, %63, %88, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>
      %90 = stablehlo.abs %87 : tensor<1x1xf32>
      %cst_44 = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
      %91 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
      %92 = stablehlo.select %89, %90, %91 : tensor<1x1xi1>, tensor<1x1xf32>
      %93 = stablehlo.iota dim = 0 : tensor<1x1xi32>
      %cst_45 = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %c_46 = stablehlo.constant dense<2147483647> : tensor<i32>
      %94:2 = stablehlo.reduce(%92 init: %cst_45), (%93 init: %c_46) across dimensions = [0] : (tensor<1x1xf32>, tensor<1x1xi32>, tensor<f32>, tensor<i32>) -> (tensor<1xf32>, tensor<1xi32>)
       reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
        %171 = stablehlo.compare GT, %arg3, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %172 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %173 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %174 = stablehlo.compare NE, %arg3, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %175 = stablehlo.not %173 : tensor<i1>
        %176 = stablehlo.and %171, %175 : tensor<i1>
        %177 = stablehlo.not %173 : tensor<i1>
        %178 = stablehlo.and %174, %177 : tensor<i1>
        %179 = stablehlo.or %176, %178 : tensor<i1>
        %180 = stablehlo.and %173, %174 : tensor<i1>
        %181 = stablehlo.or %172, %180 : tensor<i1>
        %182 = stablehlo.compare LT, %arg4, %arg2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        %183 = stablehlo.and %181, %182 : tensor<i1>
        %184 = stablehlo.or %179, %183 : tensor<i1>
        %185 = stablehlo.select %184, %arg3, %arg1 : tensor<i1>, tensor<f32>
        %186 = stablehlo.select %184, %arg4, %arg2 : tensor<i1>, tensor<i32>
        stablehlo.return %185, %186 : tensor<f32>, tensor<i32>
      }
      %95 = stablehlo.reshape %94#1 : (tensor<1xi32>) -> tensor<1x1xi32>
      %96 = stablehlo.reshape %95 : (tensor<1x1xi32>) -> tensor<1xi32>
      %c_47 = stablehlo.constant dense<0> : tensor<i32>
      %97 = stablehlo.broadcast_in_dim %c_47, dims = [] : (tensor<i32>) -> tensor<1xi32>
      %98 = stablehlo.compare LT, %96, %97, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
      %c_48 = stablehlo.constant dense<1> : tensor<i32>
      %99 = stablehlo.broadcast_in_dim %c_48, dims = [] : (tensor<i32>) -> tensor<1xi32>
      %100 = stablehlo.add %96, %99 : tensor<1xi32>
      %101 = stablehlo.select %98, %100, %96 : tensor<1xi1>, tensor<1xi32>
      %c_49 = stablehlo.constant dense<0> : tensor<i32>
      %102 = stablehlo.broadcast_in_dim %c_49, dims = [] : (tensor<i32>) -> tensor<1xi32>
      %103 = stablehlo.compare LT, %101, %102, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
      %c_50 = stablehlo.constant dense<0> : tensor<i32>
      %104 = stablehlo.broadcast_in_dim %c_50, dims = [] : (tensor<i32>) -> tensor<1xi32>
      %105 = stablehlo.compare GT, %101, %104, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
      %c_51 = stablehlo.constant dense<0> : tensor<i32>
      %106 = stablehlo.broadcast_in_dim %c_51, dims = [] : (tensor<i32>) -> tensor<1xi32>
      %107 = stablehlo.select %105, %106, %101 : tensor<1xi1>, tensor<1xi32>
      %c_52 = stablehlo.constant dense<0> : tensor<i32>
      %108 = stablehlo.broadcast_in_dim %c_52, dims = [] : (tensor<i32>) -> tensor<1xi32>
      %109 = stablehlo.select %103, %108, %107 : tensor<1xi1>, tensor<1xi32>
      %110 = stablehlo.broadcast_in_dim %109, dims = [0] : (tensor<1xi32>) -> tensor<1x1xi32>
      %111 = "stablehlo.gather"(%iterArg_26, %110) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<1x3xf32>, tensor<1x1xi32>) -> tensor<1x3xf32>
      %c_53 = stablehlo.constant dense<2> : tensor<i32>
      %112 = stablehlo.add %c_53, %82 : tensor<i32>
      %113 = stablehlo.broadcast_in_dim %112, dims = [] : (tensor<i32>) -> tensor<1x3xi32>
      %114 = stablehlo.compare EQ, %64, %113, SIGNED : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<1x3xi1>
      %cst_54 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %115 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
      %116 = stablehlo.select %114, %115, %111 : tensor<1x3xi1>, tensor<1x3xf32>
      %c_55 = stablehlo.constant dense<0> : tensor<i32>
      %117 = stablehlo.compare LT, %83, %c_55, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_56 = stablehlo.constant dense<1> : tensor<i32>
      %118 = stablehlo.add %83, %c_56 : tensor<i32>
      %119 = stablehlo.select %117, %118, %83 : tensor<i1>, tensor<i32>
      %c_57 = stablehlo.constant dense<0> : tensor<i32>
      %c_58 = stablehlo.constant dense<0> : tensor<i32>
      %c_59 = stablehlo.constant dense<0> : tensor<i32>
      %120 = stablehlo.compare LT, %82, %c_59, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_60 = stablehlo.constant dense<3> : tensor<i32>
      %121 = stablehlo.add %82, %c_60 : tensor<i32>
      %122 = stablehlo.select %120, %121, %82 : tensor<i1>, tensor<i32>
      %123 = stablehlo.dynamic_slice %116, %c_58, %122, sizes = [1, 1] : (tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>
      %124 = stablehlo.broadcast_in_dim %83, dims = [] : (tensor<i32>) -> tensor<1x1xi32>
      %125 = stablehlo.compare EQ, %63, %124, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>
      %126 = stablehlo.compare EQ, %63, %95, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>
      %c_61 = stablehlo.constant dense<0> : tensor<i32>
      %c_62 = stablehlo.constant dense<0> : tensor<i32>
      %127 = stablehlo.compare LT, %82, %c_62, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_63 = stablehlo.constant dense<3> : tensor<i32>
      %128 = stablehlo.add %82, %c_63 : tensor<i32>
      %129 = stablehlo.select %127, %128, %82 : tensor<i1>, tensor<i32>
      %130 = stablehlo.dynamic_slice %iterArg_26, %c_61, %129, sizes = [1, 1] : (tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>
      %131 = stablehlo.select %126, %130, %87 : tensor<1x1xi1>, tensor<1x1xf32>
      %132 = stablehlo.select %125, %123, %131 : tensor<1x1xi1>, tensor<1x1xf32>
      %133 = stablehlo.broadcast_in_dim %83, dims = [] : (tensor<i32>) -> tensor<1x1xi32>
      %134 = stablehlo.compare GT, %63, %133, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>
      %cst_64 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %135 = stablehlo.broadcast_in_dim %cst_64, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
      %136 = stablehlo.compare EQ, %123, %135, FLOAT : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xi1>
      %cst_65 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %137 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
      %138 = stablehlo.select %136, %137, %123 : tensor<1x1xi1>, tensor<1x1xf32>
      %139 = stablehlo.divide %132, %138 : tensor<1x1xf32>
      %cst_66 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %140 = stablehlo.broadcast_in_dim %cst_66, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
      %141 = stablehlo.select %134, %139, %140 : tensor<1x1xi1>, tensor<1x1xf32>
      %142 = stablehlo.broadcast_in_dim %83, dims = [] : (tensor<i32>) -> tensor<1x1xi32>
      %143 = stablehlo.compare EQ, %63, %142, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>
      %144 = stablehlo.compare EQ, %63, %95, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>
      %145 = stablehlo.broadcast_in_dim %144, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<1x3xi1>
      %146 = stablehlo.select %145, %iterArg_26, %iterArg_26 : tensor<1x3xi1>, tensor<1x3xf32>
      %147 = stablehlo.broadcast_in_dim %143, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<1x3xi1>
      %148 = stablehlo.select %147, %116, %146 : tensor<1x3xi1>, tensor<1x3xf32>
      %149 = stablehlo.broadcast_in_dim %82, dims = [] : (tensor<i32>) -> tensor<1x3xi32>
      %150 = stablehlo.compare GT, %64, %149, SIGNED : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<1x3xi1>
      %c_67 = stablehlo.constant dense<1> : tensor<i32>
      %151 = stablehlo.broadcast_in_dim %c_67, dims = [] : (tensor<i32>) -> tensor<1x3xi32>
      %152 = stablehlo.compare NE, %64, %151, SIGNED : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<1x3xi1>
      %153 = stablehlo.and %150, %152 : tensor<1x3xi1>
      %cst_68 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %154 = stablehlo.broadcast_in_dim %cst_68, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
      %155 = stablehlo.select %153, %116, %154 : tensor<1x3xi1>, tensor<1x3xf32>
      %156 = stablehlo.broadcast_in_dim %141, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x3xf32>
      %157 = stablehlo.multiply %156, %155 : tensor<1x3xf32>
      %158 = stablehlo.subtract %148, %157 : tensor<1x3xf32>
      %159 = stablehlo.broadcast_in_dim %82, dims = [] : (tensor<i32>) -> tensor<1x3xi32>
      %160 = stablehlo.compare EQ, %64, %159, SIGNED : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<1x3xi1>
      %161 = stablehlo.broadcast_in_dim %83, dims = [] : (tensor<i32>) -> tensor<1x1xi32>
      %162 = stablehlo.compare GT, %63, %161, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>
      %163 = stablehlo.broadcast_in_dim %162, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<1x3xi1>
      %164 = stablehlo.and %160, %163 : tensor<1x3xi1>
      %165 = stablehlo.broadcast_in_dim %141, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x3xf32>
      %166 = stablehlo.select %164, %165, %158 : tensor<1x3xi1>, tensor<1x3xf32>
      %c_69 = stablehlo.constant dense<0> : tensor<i32>
      %167 = stablehlo.add %c_69, %82 : tensor<i32>
      %168 = stablehlo.broadcast_in_dim %167, dims = [] : (tensor<i32>) -> tensor<1x1xi32>
      %169 = stablehlo.compare EQ, %65, %168, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>
      %170 = stablehlo.select %169, %95, %iterArg_27 : tensor<1x1xi1>, tensor<1x1xi32>
      stablehlo.return %61, %iterArg_25, %166, %170 : tensor<i32>, tensor<i32>, tensor<1x3xf32>, tensor<1x1xi32>
    }
    %6 = stablehlo.slice %5#2 [0:1, 0:1] : (tensor<1x3xf32>) -> tensor<1x1xf32>
    %7 = stablehlo.slice %5#2 [0:1, 1:2] : (tensor<1x3xf32>) -> tensor<1x1xf32>
    %8 = stablehlo.reshape %7 : (tensor<1x1xf32>) -> tensor<1xf32>
    %9 = stablehlo.convert %8 : (tensor<1xf32>) -> tensor<1xi32>
    %10 = stablehlo.reshape %5#3 : (tensor<1x1xi32>) -> tensor<1xi32>
    %11 = stablehlo.slice %5#2 [0:1, 2:3] : (tensor<1x3xf32>) -> tensor<1x1xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %13 = stablehlo.compare LT, %9, %12, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
    %c_4 = stablehlo.constant dense<1> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %15 = stablehlo.add %9, %14 : tensor<1xi32>
    %16 = stablehlo.select %13, %15, %9 : tensor<1xi1>, tensor<1xi32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %17 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %18 = stablehlo.compare LT, %16, %17, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %19 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %20 = stablehlo.compare GT, %16, %19, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %21 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %22 = stablehlo.select %20, %21, %16 : tensor<1xi1>, tensor<1xi32>
    %c_8 = stablehlo.constant dense<0> : tensor<i32>
    %23 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %24 = stablehlo.select %18, %23, %22 : tensor<1xi1>, tensor<1xi32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [0] : (tensor<1xi32>) -> tensor<1x1xi32>
    %26 = "stablehlo.gather"(%0, %25) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<1xi32>, tensor<1x1xi32>) -> tensor<1xi32>
    %27 = stablehlo.iota dim = 0 : tensor<1xi32>
    %28 = stablehlo.compare NE, %10, %27, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
    %29 = stablehlo.convert %28 : (tensor<1xi1>) -> tensor<1xi32>
    %c_9 = stablehlo.constant dense<0> : tensor<i32>
    %30 = stablehlo.reduce(%29 init: %c_9) applies stablehlo.add across dimensions = [0] : (tensor<1xi32>, tensor<i32>) -> tensor<i32>
    %31 = stablehlo.reshape %6 : (tensor<1x1xf32>) -> tensor<1xf32>
    %32 = stablehlo.slice %31 [0:1:2] : (tensor<1xf32>) -> tensor<1xf32>
    %c_10 = stablehlo.constant dense<2> : tensor<i32>
    %c_11 = stablehlo.constant dense<0> : tensor<i32>
    %33 = stablehlo.compare EQ, %c_10, %c_11, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_12 = stablehlo.constant dense<-2147483648> : tensor<i32>
    %34 = stablehlo.compare EQ, %30, %c_12, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_13 = stablehlo.constant dense<-1> : tensor<i32>
    %35 = stablehlo.compare EQ, %c_10, %c_13, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %36 = stablehlo.and %34, %35 : tensor<i1>
    %37 = stablehlo.or %33, %36 : tensor<i1>
    %c_14 = stablehlo.constant dense<1> : tensor<i32>
    %38 = stablehlo.select %37, %c_14, %c_10 : tensor<i1>, tensor<i32>
    %39 = stablehlo.remainder %30, %38 : tensor<i32>
    %c_15 = stablehlo.constant dense<0> : tensor<i32>
    %40 = stablehlo.compare NE, %39, %c_15, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_16 = stablehlo.constant dense<0> : tensor<i32>
    %41 = stablehlo.compare LT, %39, %c_16, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_17 = stablehlo.constant dense<0> : tensor<i32>
    %42 = stablehlo.compare LT, %c_10, %c_17, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %43 = stablehlo.compare NE, %41, %42, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %44 = stablehlo.and %40, %43 : tensor<i1>
    %45 = stablehlo.add %39, %c_10 : tensor<i32>
    %46 = stablehlo.select %44, %45, %39 : tensor<i1>, tensor<i32>
    %c_18 = stablehlo.constant dense<0> : tensor<i32>
    %47 = stablehlo.compare EQ, %c_10, %c_18, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_19 = stablehlo.constant dense<0> : tensor<i32>
    %48 = stablehlo.select %47, %c_19, %46 : tensor<i1>, tensor<i32>
    %49 = stablehlo.convert %48 : (tensor<i32>) -> tensor<f32>
    %cst_20 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %50 = stablehlo.multiply %cst_20, %49 : tensor<f32>
    %cst_21 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %51 = stablehlo.subtract %cst_21, %50 : tensor<f32>
    %52 = stablehlo.sign %32 : tensor<1xf32>
    %cst_22 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %53 = stablehlo.reduce(%52 init: %cst_22) applies stablehlo.multiply across dimensions = [0] : (tensor<1xf32>, tensor<f32>) -> tensor<f32>
    %54 = stablehlo.multiply %51, %53 : tensor<f32>
    %55 = stablehlo.abs %32 : tensor<1xf32>
    %56 = stablehlo.log %55 : tensor<1xf32>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %57 = stablehlo.reduce(%56 init: %cst_23) applies stablehlo.add across dimensions = [0] : (tensor<1xf32>, tensor<f32>) -> tensor<f32>
    %cst_24 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %58 = stablehlo.reduce(%32 init: %cst_24) applies stablehlo.multiply across dimensions = [0] : (tensor<1xf32>, tensor<f32>) -> tensor<f32>
    %59 = stablehlo.multiply %51, %58 : tensor<f32>
    %60 = stablehlo.reshape %59 : (tensor<f32>) -> tensor<f32>
    return %60 : tensor<f32>
  }
}
